// trace-code OUT PROGRAM [ARG…]: runs PROGRAM one instruction at a time
// (ptrace single-step) and, when it exits or this tracer gets SIGTERM, writes
// every distinct code address it executed (in 16-byte blocks, hex, one per
// line) to OUT. Children it starts are not followed. For
// scripts/lock-screen-order: which functions the lock screen runs.
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace-start.h"

#define SLOTS (1u << 22)  // a set of block addresses; a start-up runs ~12,000
static uint64_t blocks[SLOTS];

static void add(uint64_t address) {
  address &= ~(uint64_t)15;
  uint64_t slot = (address * 0x9E3779B97F4A7C15ull) >> 42;
  while (blocks[slot] != 0 && blocks[slot] != address) slot = (slot + 1) & (SLOTS - 1);
  blocks[slot] = address;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: trace-code OUT PROGRAM [ARG…]\n");
    return 64;
  }
  pid_t pid = start_traced(argv + 2);
  int status;
  unsigned long steps = 0;
  int pending = 0;  // a signal the program got, handed on with the next step
  int ended = 0;    // exited and reaped: its pid may be someone else's now
  while (!stopping) {
    struct user_regs_struct registers;
    // The program's own code only (not the vDSO).
    if (ptrace(PTRACE_GETREGS, pid, 0, &registers) == 0 && registers.rip < 0x7f0000000000ull) add(registers.rip);
    if (ptrace(PTRACE_SINGLESTEP, pid, 0, pending) != 0 || waitpid(pid, &status, 0) < 0) break;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      ended = 1;
      break;
    }
    pending = WIFSTOPPED(status) && WSTOPSIG(status) != SIGTRAP ? WSTOPSIG(status) : 0;
    steps++;
  }
  if (!ended) kill(pid, SIGKILL);
  FILE *out = fopen(argv[1], "w");
  if (!out) {
    perror(argv[1]);
    return 1;
  }
  for (unsigned i = 0; i < SLOTS; i++)
    if (blocks[i] != 0) fprintf(out, "%lx\n", (unsigned long)blocks[i]);
  fclose(out);
  fprintf(stderr, "trace-code: %lu instructions\n", steps);
  return 0;
}
