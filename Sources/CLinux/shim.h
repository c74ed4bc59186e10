// Linux calls Swift cannot make directly (variadic in C): one small wrapper
// each, with the kernel constants they need.
#include <signal.h>
#include <sys/prctl.h>

// prctl(PR_SET_PDEATHSIG): `signal` is sent to the caller when the thread
// that created it exits.
static inline int passlock_set_parent_death_signal(int signal) {
  return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}
