#include "tests/fuzz/Isolated.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <typeinfo>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TYLO_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TYLO_FUZZ_ASAN 1
#endif

namespace tyl::fuzz {
namespace {

// One record per finished job: "<index> <ok 0|1> <verdict> <what with newlines escaped>\n".
void writeRecord(int fd, size_t index, const Outcome& o) {
  std::string what;
  for (char c : o.what) what += c == '\n' ? std::string("\\n") : std::string(1, c);
  if (what.size() > 2000) what = what.substr(0, 2000) + "...";
  std::string line = std::to_string(index) + " " + (o.ok ? "1" : "0") + " " +
                     std::to_string(static_cast<int>(o.verdict)) + " " + what + "\n";
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(111);
    p += w;
    left -= static_cast<size_t>(w);
  }
}

Outcome runOne(const std::function<Result(size_t)>& job, size_t i) {
  Outcome o;
  try {
    Result r = job(i);
    o.verdict = r.verdict;
    o.ok = r.verdict != Verdict::Bug;
    o.what = o.ok ? r.detail : "contract broken: " + r.detail;
  } catch (const std::exception& e) {
    o.what = std::string("exception ") + typeid(e).name() + " escaped: " + e.what();
  } catch (...) {
    o.what = "an unknown exception escaped";
  }
  return o;
}

[[noreturn]] void child(int fd, const std::vector<size_t>& todo, size_t from,
                        const std::function<Result(size_t)>& job) {
  // A crash ends this child with its signal; handlers installed by the parent (Catch2
  // reports and prints its summary from them) would run in the child.
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP}) ::signal(sig, SIG_DFL);
  // The stack a user's shell gives tyloc, whatever the test runner's is: deep recursion
  // then fails the same way everywhere.
  rlimit stack{};
  if (getrlimit(RLIMIT_STACK, &stack) == 0) {
    stack.rlim_cur = std::min<rlim_t>(rlim_t{8} << 20, stack.rlim_max);
    setrlimit(RLIMIT_STACK, &stack);
  }
#ifndef TYLO_FUZZ_ASAN
  rlimit mem{rlim_t{4} << 30, rlim_t{4} << 30};
  setrlimit(RLIMIT_AS, &mem);
#endif
  for (size_t k = from; k < todo.size(); ++k) writeRecord(fd, todo[k], runOne(job, todo[k]));
  std::fflush(nullptr);
  _exit(0);
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status)) + " (a sanitizer report or an abort)";
  return "unknown status";
}

using Clock = std::chrono::steady_clock;

// One lane of work: its inputs, the child running them, and how far it got.
struct Worker {
  std::vector<size_t> todo;
  size_t done = 0;  // todo[0 .. done) have outcomes
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  Clock::time_point deadline;
};

}  // namespace

std::vector<Outcome> runIsolated(size_t n, const std::function<Result(size_t)>& job, int timeoutSeconds,
                                 int workers) {
  std::vector<Outcome> outcomes(n);
  workers = std::max(1, std::min<int>(workers, static_cast<int>(std::max<size_t>(n, 1))));
  // Inputs are dealt round-robin, so expensive neighbours (a region of an example that
  // compiles completely) are shared between the workers.
  std::vector<Worker> lanes(static_cast<size_t>(workers));
  for (size_t i = 0; i < n; ++i) lanes[i % lanes.size()].todo.push_back(i);
  auto timeout = std::chrono::seconds(timeoutSeconds);

  auto spawn = [&](Worker& w) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      ::close(fds[0]);
      for (Worker& other : lanes)
        if (other.fd >= 0) ::close(other.fd);
      child(fds[1], w.todo, w.done, job);
    }
    ::close(fds[1]);
    w.pid = pid;
    w.fd = fds[0];
    w.buffer.clear();
    w.deadline = Clock::now() + timeout;
  };
  // The child is gone (finished, died or killed): the input it was running failed.
  auto reap = [&](Worker& w, bool timedOut) {
    if (timedOut) ::kill(w.pid, SIGKILL);
    ::close(w.fd);
    w.fd = -1;
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    w.pid = -1;
    bool clean = !timedOut && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (w.done < w.todo.size()) {
      if (clean) throw std::runtime_error("a child stopped early without failing");
      Outcome& o = outcomes[w.todo[w.done]];
      o.ok = false;
      o.verdict = Verdict::Bug;
      o.what = timedOut ? "timeout: no result within " + std::to_string(timeoutSeconds) + " s" : describeStatus(status);
      ++w.done;
    }
  };

  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Worker*> polled;
    for (Worker& w : lanes) {
      if (w.pid < 0 && w.done < w.todo.size()) spawn(w);
      if (w.pid >= 0) {
        fds.push_back(pollfd{w.fd, POLLIN, 0});
        polled.push_back(&w);
      }
    }
    if (polled.empty()) break;
    Clock::time_point first = polled.front()->deadline;
    for (Worker* w : polled) first = std::min(first, w->deadline);
    auto waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(first - Clock::now()).count();
    int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(0, waitMs)));
    if (ready < 0 && errno != EINTR) throw std::runtime_error("poll failed");
    for (size_t k = 0; k < polled.size(); ++k) {
      Worker& w = *polled[k];
      if (ready > 0 && (fds[k].revents & (POLLIN | POLLHUP | POLLERR))) {
        char chunk[4096];
        ssize_t got = ::read(w.fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
          reap(w, false);
          continue;
        }
        w.buffer.append(chunk, static_cast<size_t>(got));
        size_t nl;
        while ((nl = w.buffer.find('\n')) != std::string::npos) {
          std::string line = w.buffer.substr(0, nl);
          w.buffer.erase(0, nl + 1);
          size_t a = line.find(' '), b = line.find(' ', a + 1), c = line.find(' ', b + 1);
          Outcome& o = outcomes.at(std::stoul(line.substr(0, a)));
          o.ok = line.substr(a + 1, b - a - 1) == "1";
          o.verdict = static_cast<Verdict>(std::stoi(line.substr(b + 1, c - b - 1)));
          o.what = c == std::string::npos ? "" : line.substr(c + 1);
          ++w.done;
          w.deadline = Clock::now() + timeout;
        }
      } else if (Clock::now() >= w.deadline) {
        reap(w, true);
      }
    }
  }
  return outcomes;
}

std::vector<KnownOpen> readKnownOpen(const std::string& path) {
  std::vector<KnownOpen> list;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    size_t end = line.find_first_of(" \t", start);
    KnownOpen k;
    k.name = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (end != std::string::npos) {
      size_t sig = line.find_first_not_of(" \t", end);
      if (sig != std::string::npos) k.signature = line.substr(sig);
    }
    list.push_back(k);
  }
  return list;
}

}  // namespace tyl::fuzz
