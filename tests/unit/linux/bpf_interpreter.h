// bpf_interpreter.h — a classic-BPF interpreter for the instructions
// libseccomp emits, run on struct seccomp_data, for the seccomp tests
// (seccomp_filter_test.cpp, seccomp_doc_table_test.cpp).
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace cordon::linux_impl::test_bpf {

// A classic-BPF interpreter for the instructions libseccomp emits, run on
// struct seccomp_data. Any other instruction fails the test (extend it then).
struct bpf_verdict {
  bool ok = true;
  std::uint32_t action = 0;
};

inline bpf_verdict run_bpf(const std::vector<sock_filter>& program, const seccomp_data& data) {
  std::uint32_t a = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(&data);
  for (std::size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& insn = program[pc];
    switch (insn.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (insn.k + 4 > sizeof data || insn.k % 4 != 0) return {false, 0};
        std::memcpy(&a, bytes + insn.k, 4);
        break;
      case BPF_ALU | BPF_AND | BPF_K: a &= insn.k; break;
      case BPF_JMP | BPF_JA: pc += insn.k; break;
      case BPF_JMP | BPF_JEQ | BPF_K: pc += (a == insn.k) ? insn.jt : insn.jf; break;
      case BPF_JMP | BPF_JGT | BPF_K: pc += (a > insn.k) ? insn.jt : insn.jf; break;
      case BPF_JMP | BPF_JGE | BPF_K: pc += (a >= insn.k) ? insn.jt : insn.jf; break;
      case BPF_JMP | BPF_JSET | BPF_K: pc += (a & insn.k) ? insn.jt : insn.jf; break;
      case BPF_RET | BPF_K: return {true, insn.k};
      default: return {false, 0};
    }
  }
  return {false, 0};  // fell off the end
}

}  // namespace cordon::linux_impl::test_bpf
