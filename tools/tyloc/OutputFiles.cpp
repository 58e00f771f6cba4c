#include "tools/tyloc/OutputFiles.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tyl::driver {
namespace fs = std::filesystem;

namespace {

bool writeAll(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Where the bytes go: through symbolic links to the file they name.
fs::path destination(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
    fs::path next = fs::read_symlink(p, ec);
    if (ec) break;
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  return p;
}

struct Staged {
  fs::path target;
  std::string temp;  // empty: written directly (not a regular file)
  const std::string* contents = nullptr;
};

}  // namespace

std::string OutputFiles::commit() {
  std::vector<Staged> staged;
  auto unstage = [&]() {
    for (const Staged& s : staged)
      if (!s.temp.empty()) ::unlink(s.temp.c_str());
  };
  auto failure = [&](const std::string& path, int err) {
    unstage();
    return fmt::format("cannot write '{}': {}", path, std::strerror(err));
  };
  for (const File& f : files_) {
    Staged s;
    s.contents = &f.contents;
    struct stat st {};
    // A device, pipe or socket, also through links that name no path (/dev/stdout is
    // /proc/self/fd/1, whose target reads "pipe:[...]"): written in place below.
    if (::stat(f.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      s.target = f.path;
      staged.push_back(s);
      continue;
    }
    s.target = destination(f.path);
    bool exists = ::stat(s.target.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return failure(f.path, EISDIR);
    if (!s.target.has_filename()) return failure(f.path, EISDIR);
    fs::path dir = s.target.parent_path().empty() ? fs::path(".") : s.target.parent_path();
    s.temp = (dir / ("." + s.target.filename().string() + ".tmp-XXXXXX")).string();
    int fd = ::mkstemp(s.temp.data());
    if (fd < 0) return failure(f.path, errno);
    staged.push_back(s);
    // A replaced file keeps its permissions; a new one gets those of any new file.
    mode_t mode = 0;
    if (exists) {
      mode = st.st_mode & 07777;
    } else {
      mode_t mask = ::umask(0);
      ::umask(mask);
      mode = 0666 & ~mask;
    }
    bool ok = writeAll(fd, f.contents) && ::fchmod(fd, mode) == 0;
    int err = errno;
    if (::close(fd) != 0 && ok) {
      ok = false;
      err = errno;
    }
    if (!ok) return failure(f.path, err);
  }
  // Everything is written: move the files into place, then write the devices.
  for (size_t i = 0; i < staged.size(); ++i) {
    const Staged& s = staged[i];
    if (s.temp.empty()) continue;
    if (::rename(s.temp.c_str(), s.target.c_str()) != 0) {
      int err = errno;
      for (size_t j = i; j < staged.size(); ++j)
        if (!staged[j].temp.empty()) ::unlink(staged[j].temp.c_str());
      return fmt::format("cannot write '{}': {}", files_[i].path, std::strerror(err));
    }
  }
  for (size_t i = 0; i < staged.size(); ++i) {
    const Staged& s = staged[i];
    if (!s.temp.empty()) continue;
    int fd = ::open(s.target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return fmt::format("cannot write '{}': {}", files_[i].path, std::strerror(errno));
    bool ok = writeAll(fd, *s.contents);
    int err = errno;
    ::close(fd);
    if (!ok) return fmt::format("cannot write '{}': {}", files_[i].path, std::strerror(err));
  }
  return "";
}

bool sameFile(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path pa = fs::weakly_canonical(fs::absolute(a, ec), ec), pb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  if (ec || pa != pb) return false;
  return !fs::exists(pa, ec) || fs::is_regular_file(pa, ec);
}

std::string writeFileAtomically(const std::string& path, const std::string& contents) {
  OutputFiles files;
  files.add(path, contents);
  return files.commit();
}

std::string headerInclude(const std::string& output, const std::string& header) {
  namespace fs = std::filesystem;
  const std::string name = fs::path(header).filename().string();
  if (output.empty()) return name;
  std::error_code ec;
  const fs::path from = fs::absolute(output, ec).parent_path().lexically_normal();
  const fs::path to = ec ? fs::path() : fs::absolute(header, ec).lexically_normal();
  const fs::path relative = ec ? fs::path() : to.lexically_relative(from);
  return relative.empty() ? name : relative.generic_string();
}

}  // namespace tyl::driver
