#include "tests/hostrun/GuardedBuffers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <stdexcept>

namespace tylo_host {
namespace {

constexpr unsigned char kCanary = 0xc3;

size_t pageBytes() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

void onFault(int, siginfo_t* info, void*) {
  char line[160];
  int n = std::snprintf(line, sizeof line,
                        "tylo_host: the generated code accessed %p, in a guard page next to a tensor (out of bounds)\n",
                        info->si_addr);
  if (n > 0) (void)!write(2, line, static_cast<size_t>(n));
  _exit(1);
}

}  // namespace

GuardedBuffers::GuardedBuffers(const std::vector<tyl::emu::Buffer>& buffers) {
  const size_t page = pageBytes();
  for (const tyl::emu::Buffer& b : buffers) {
    Mapping m;
    m.bytes = b.bytes.size();
    size_t rounded = (m.bytes + 15) / 16 * 16;
    size_t dataPages = (rounded + page - 1) / page;
    m.length = (dataPages + 2) * page;
    void* p = mmap(nullptr, m.length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("GuardedBuffers: mmap failed");
    m.base = static_cast<std::byte*>(p);
    if (mprotect(m.base + page, dataPages * page, PROT_READ | PROT_WRITE) != 0)
      throw std::runtime_error("GuardedBuffers: mprotect failed");
    m.data = m.base + page + dataPages * page - rounded;
    std::memset(m.data + m.bytes, kCanary, rounded - m.bytes);
    if (b.initialized)
      std::memcpy(m.data, b.bytes.data(), m.bytes);
    else
      std::memset(m.data, 0xff, m.bytes);  // NaN in every float type
    mappings_.push_back(m);
  }
}

GuardedBuffers::~GuardedBuffers() {
  for (const Mapping& m : mappings_) munmap(m.base, m.length);
}

std::byte* GuardedBuffers::data(int i) const { return mappings_.at(static_cast<size_t>(i)).data; }

std::string GuardedBuffers::copyBack(std::vector<tyl::emu::Buffer>& buffers) const {
  std::string problems;
  for (size_t i = 0; i < mappings_.size(); ++i) {
    const Mapping& m = mappings_[i];
    std::memcpy(buffers[i].bytes.data(), m.data, m.bytes);
    size_t rounded = (m.bytes + 15) / 16 * 16;
    for (size_t j = m.bytes; j < rounded; ++j)
      if (static_cast<unsigned char>(m.data[j]) != kCanary) {
        problems += "buffer " + std::to_string(i) + ": byte " + std::to_string(j) + " past its end was written\n";
        break;
      }
  }
  return problems;
}

void reportGuardPageFaults() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  struct sigaction sa {};
  sa.sa_sigaction = onFault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, nullptr);
  sigaction(SIGBUS, &sa, nullptr);
}

}  // namespace tylo_host
