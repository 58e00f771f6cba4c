# Warning flags for the project's own code. Third-party headers (the ANTLR runtime)
# are included as SYSTEM so their warnings stay out of our builds.
function(tylo_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
endfunction()
