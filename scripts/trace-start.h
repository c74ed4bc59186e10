// What scripts/trace-code.c and scripts/trace-functions.c share: PROGRAM
// started under ptrace and stopped at its exec (loaded, not started), and
// SIGTERM setting `stopping`.
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void on_term(int signal) {
  (void)signal;
  stopping = 1;
}

// Runs `argv` (PROGRAM and its arguments) traced; returns its pid, stopped.
static pid_t start_traced(char **argv) {
  // No SA_RESTART: SIGTERM must end a waitpid on a program blocked in poll.
  struct sigaction action = {0};
  action.sa_handler = on_term;
  sigaction(SIGTERM, &action, 0);
  pid_t pid = fork();
  if (pid == 0) {
    ptrace(PTRACE_TRACEME, 0, 0, 0);
    execv(argv[0], argv);
    _exit(127);
  }
  int status;
  waitpid(pid, &status, 0);
  return pid;
}
