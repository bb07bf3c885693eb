#include "linux/memory_trim.h"

#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace cordon::linux_impl {
namespace {

// Text relocations would make "read-only" pages private copies: dropping
// them would undo the relocations. Linkers do not emit them for position-
// independent code, but check rather than assume.
bool has_text_relocations(const dl_phdr_info* info) noexcept {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_DYNAMIC) continue;
    const auto* dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + ph.p_vaddr);
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      if (dyn->d_tag == DT_TEXTREL) return true;
      if (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_TEXTREL) != 0) return true;
    }
  }
  return false;
}

// The first object dl_iterate_phdr reports is the program itself. Its
// segments without write permission, minus the RELRO range (written by the
// loader, then made read-only), are pages nothing ever writes.
int drop_program_pages(dl_phdr_info* info, std::size_t, void*) noexcept {
  if (has_text_relocations(info)) return 1;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::uintptr_t relro_start = 0, relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_GNU_RELRO) {
      relro_start = (info->dlpi_addr + ph.p_vaddr) & ~(page - 1);
      relro_end = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1);
    }
  }
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) != 0) continue;
    // Whole pages inside the segment only: a page shared with a neighbour stays.
    std::uintptr_t start = (info->dlpi_addr + ph.p_vaddr + page - 1) & ~(page - 1);
    std::uintptr_t end = (info->dlpi_addr + ph.p_vaddr + ph.p_filesz) & ~(page - 1);
    if (relro_end > relro_start && start < relro_end && relro_start < end) continue;
    if (end > start) ::madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);
  }
  return 1;  // the program only
}

}  // namespace

void release_idle_memory() noexcept {
  ::dl_iterate_phdr(drop_program_pages, nullptr);
  ::malloc_trim(0);
}

}  // namespace cordon::linux_impl
