// trace-functions FUNCTIONS OUT PROGRAM [ARG…]: runs PROGRAM with a
// breakpoint on the first byte of each function FUNCTIONS lists (hex
// addresses of the ELF symbols of type FUNC, one per line) and, when it
// exits or this tracer gets SIGTERM, writes those that ran to OUT (hex, in
// the order they first ran). Each breakpoint is taken
// out when hit, so the program and its libraries run at full speed, unlike
// trace-code's single steps (minutes instead of an hour where cairo draws).
// Children are followed until they exec. For scripts/wayland-lock-screen-order
// and scripts/daemon-order: which functions the lock screen, or the daemon, runs.
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace-start.h"

#define SLOTS (1u << 20)  // an open-addressing set of breakpoints; ~60,000 functions
static struct {
  uint64_t address;  // 0: empty
  uint8_t original;
  uint8_t hit;  // taken out: a later trap there is not ours
} slots[SLOTS];
static uint64_t *ran;
static size_t ran_count;

static size_t slot_of(uint64_t address) {
  size_t slot = (address * 0x9E3779B97F4A7C15ull) >> 44;
  while (slots[slot].address != 0 && slots[slot].address != address) slot = (slot + 1) & (SLOTS - 1);
  return slot;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: trace-functions FUNCTIONS OUT PROGRAM [ARG…]\n");
    return 64;
  }
  pid_t pid = start_traced(argv + 3);
  int status;
  // Should this tracer die, the program dies too, not at its next
  // breakpoint. Children it starts share its code until they exec
  // (posix_spawn's vfork): they are traced too, so a breakpoint they meet
  // counts and is taken out instead of killing them, and let go at exec.
  ptrace(PTRACE_SETOPTIONS, pid, 0,
         PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC);
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
  FILE *maps = fopen(path, "r");
  unsigned long base = 0;
  if (!maps || fscanf(maps, "%lx", &base) != 1) {
    fprintf(stderr, "trace-functions: cannot read %s\n", path);
    kill(pid, SIGKILL);
    return 1;
  }
  fclose(maps);
  // A program that is not position-independent runs at the addresses nm gives.
  Elf64_Ehdr header;
  FILE *program = fopen(argv[3], "rb");
  if (program && fread(&header, sizeof header, 1, program) == 1 && header.e_type == ET_EXEC) base = 0;
  if (program) fclose(program);
  snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
  int memory = open(path, O_RDWR);
  FILE *functions = fopen(argv[1], "r");
  if (memory < 0 || !functions) {
    perror(memory < 0 ? path : argv[1]);
    kill(pid, SIGKILL);
    return 1;
  }
  unsigned long offset;
  size_t count = 0;
  const uint8_t trap = 0xCC;  // int3
  while (fscanf(functions, "%lx", &offset) == 1) {
    uint64_t address = base + offset;
    size_t slot = slot_of(address);
    if (slots[slot].address != 0) continue;
    if (pread(memory, &slots[slot].original, 1, (off_t)address) != 1 || pwrite(memory, &trap, 1, (off_t)address) != 1)
      continue;
    slots[slot].address = address;
    count++;
  }
  fclose(functions);
  ran = calloc(count + 1, sizeof *ran);
  int ended = 0;
  if (ptrace(PTRACE_CONT, pid, 0, 0) != 0) stopping = 1;
  while (!stopping) {
    pid_t who = waitpid(-1, &status, __WALL);
    if (who < 0) break;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (who == pid) {
        ended = 1;
        break;
      }
      continue;
    }
    int event = status >> 16;
    if (event == PTRACE_EVENT_EXEC && who != pid) {
      ptrace(PTRACE_DETACH, who, 0, 0);
      continue;
    }
    // Fork, clone and exec events, and a new child's first stop, carry no
    // signal; any other signal is handed on.
    int signal = event != 0 || (WSTOPSIG(status) == SIGSTOP && who != pid) ? 0 : WSTOPSIG(status);
    struct user_regs_struct registers;
    if (signal == SIGTRAP && ptrace(PTRACE_GETREGS, who, 0, &registers) == 0) {
      size_t slot = slot_of(registers.rip - 1);
      if (slots[slot].address == registers.rip - 1 && !slots[slot].hit) {
        // Ours: the byte back (in the memory the program and its children
        // share), the instruction again, and no signal.
        pwrite(memory, &slots[slot].original, 1, (off_t)slots[slot].address);
        slots[slot].hit = 1;
        registers.rip -= 1;
        ptrace(PTRACE_SETREGS, who, 0, &registers);
        ran[ran_count++] = slots[slot].address - base;
        signal = 0;
      }
    }
    if (ptrace(PTRACE_CONT, who, 0, signal) != 0 && who == pid) break;
  }
  if (!ended) kill(pid, SIGKILL);
  FILE *out = fopen(argv[2], "w");
  if (!out) {
    perror(argv[2]);
    return 1;
  }
  for (size_t i = 0; i < ran_count; i++) fprintf(out, "%lx\n", (unsigned long)ran[i]);
  fclose(out);
  fprintf(stderr, "trace-functions: %zu of %zu functions ran\n", ran_count, count);
  return 0;
}
