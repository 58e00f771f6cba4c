// Writing what tyloc generates: every file of a run is written whole or not at all.
//
// Each file is first written to a temporary file next to its destination (same file
// system), and only when all of them are written are they renamed into place, so a failed
// run leaves every earlier output as it was and no temporary behind. A destination that is
// a symbolic link is followed (the link stays, its target gets the new contents); one that
// is not a regular file (/dev/null, /dev/stdout, a pipe) is written to directly.
#pragma once

#include <string>
#include <vector>

namespace tyl::driver {

class OutputFiles {
 public:
  void add(std::string path, std::string contents) { files_.push_back({std::move(path), std::move(contents)}); }

  // Writes every added file. Returns "" on success, else one line "cannot write 'PATH':
  // why" about the first file that failed (nothing is then changed on disk).
  std::string commit();

 private:
  struct File {
    std::string path;
    std::string contents;
  };
  std::vector<File> files_;
};

// Whether two paths name the same regular file (or the same path not created yet), so that
// writing one would replace the other. Devices such as /dev/null are never the same file.
bool sameFile(const std::string& a, const std::string& b);

// One file through OutputFiles: "" or "cannot write 'PATH': why".
std::string writeFileAtomically(const std::string& path, const std::string& contents);

// How the generated .cu at `output` names the header at `header` in its #include: the path
// from the .cu's folder (`kernels.cuh` beside it, `../include/kernels.cuh`), or the header's
// file name when the .cu goes to standard output (`output` empty).
std::string headerInclude(const std::string& output, const std::string& header);

}  // namespace tyl::driver
