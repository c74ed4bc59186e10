// Linux calls Swift cannot make directly (variadic in C: prctl, ioctl with a
// structure) and the kernel's constants and layouts they need: one small
// wrapper each, typed and named for the PasslockPOSIX type that uses it.
#include <linux/kd.h>
#include <linux/vt.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <spawn.h>
#include <sys/types.h>
#include <unistd.h>

// posix_spawn_file_actions_addclosefrom_np (glibc 2.34), declared by spawn.h
// only with _GNU_SOURCE: the child closes every descriptor from `from` up.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

// accept4(2) and pipe2(2), declared by sys/socket.h and unistd.h only with
// _GNU_SOURCE: a descriptor is close-on-exec from the moment it exists.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
extern int pipe2(int fds[2], int flags);

// open(2), openat(2) and fcntl(2) are variadic in C, which Swift cannot
// call: one fixed form each. The sources both builds compile call these,
// never Glibc's overlay functions, which Embedded Swift has not. Declared
// as fcntl.h does, not included: its O_* constants stay with the C library's
// module, where every file finds them.
#if defined(__USE_FILE_OFFSET64) || defined(__USE_TIME64_REDIRECTS)
#error "glibc redirects open and fcntl here (open64, fcntl64): include fcntl.h instead of declaring them"
#endif
extern int open(const char *path, int flags, ...);
extern int openat(int directory, const char *path, int flags, ...);
extern int fcntl(int fd, int command, ...);
static inline int passlock_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }
static inline int passlock_openat(int directory, const char *path, int flags, mode_t mode) {
  return openat(directory, path, flags, mode);
}
static inline int passlock_fcntl(int fd, int command, int value) { return fcntl(fd, command, value); }

// prctl(PR_SET_PDEATHSIG): `signal` is sent to the caller when the thread
// that created it exits.
static inline int passlock_set_parent_death_signal(int signal) {
  return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

// prctl(PR_SET_DUMPABLE, 0): no core file, and no ptrace or /proc/PID/fd
// for other processes of the same user.
static inline int passlock_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL); }

// The VT ioctls (console_ioctl(2), linux/vt.h) on a descriptor of a VT or
// /dev/tty0.
static inline int passlock_vt_active(int fd, unsigned short *active) {
  struct vt_stat state;
  int rc = ioctl(fd, VT_GETSTATE, &state);
  if (rc == 0) *active = state.v_active;
  return rc;
}
static inline int passlock_vt_first_free(int fd, int *vt) { return ioctl(fd, VT_OPENQRY, vt); }
static inline int passlock_vt_activate(int fd, int vt) { return ioctl(fd, VT_ACTIVATE, vt); }
static inline int passlock_vt_release_display(int fd, int acknowledge) { return ioctl(fd, VT_RELDISP, acknowledge); }
static inline int passlock_vt_lock_switching(int fd) { return ioctl(fd, VT_LOCKSWITCH, 1); }
static inline int passlock_vt_unlock_switching(int fd) { return ioctl(fd, VT_UNLOCKSWITCH, 1); }
static inline int passlock_vt_disallocate(int fd, int vt) { return ioctl(fd, VT_DISALLOCATE, vt); }

// TIOCGWINSZ (tty_ioctl(4)): a terminal's columns and rows.
static inline int passlock_terminal_size(int fd, unsigned short *columns, unsigned short *rows) {
  struct winsize size;
  int rc = ioctl(fd, TIOCGWINSZ, &size);
  if (rc == 0) {
    *columns = size.ws_col;
    *rows = size.ws_row;
  }
  return rc;
}

// KDGKBLED (console_ioctl(2)): the console keyboard's lock flags (not its
// lights); Caps Lock is K_CAPSLOCK. Fails on anything but a VT.
static inline int passlock_console_caps_lock(int fd, int *on) {
  char flags = 0;
  int rc = ioctl(fd, KDGKBLED, &flags);
  if (rc == 0) *on = (flags & K_CAPSLOCK) != 0;
  return rc;
}

// pidfd_open(2): a descriptor that polls readable once the process exits.
static inline int passlock_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

// getsockopt(SO_PEERCRED): struct ucred is declared only under _GNU_SOURCE;
// this is its layout (socket(7)), which the kernel fixes.
struct passlock_peer_credentials {
  pid_t pid;
  uid_t uid;
  gid_t gid;
};
static inline int passlock_get_peer_credentials(int socket, struct passlock_peer_credentials *peer) {
  socklen_t length = sizeof *peer;
  return getsockopt(socket, SOL_SOCKET, SO_PEERCRED, peer, &length);
}

// setfsuid(2) (sys/fsuid.h): the uid file access is checked as. Going from 0
// to another uid also drops the file capabilities (CAP_DAC_OVERRIDE...): a
// setuid-root process opens files exactly as its caller could. Returns the
// previous fsuid.
static inline int passlock_set_file_access_uid(uid_t uid) { return (int)syscall(SYS_setfsuid, uid); }

// memfd_create(2) with MFD_CLOEXEC (declared by sys/mman.h only under
// _GNU_SOURCE): anonymous shared memory for the Wayland lock screen's frames.
static inline int passlock_memfd_create(const char *name) { return (int)syscall(SYS_memfd_create, name, 1U /* MFD_CLOEXEC */); }

// malloc_trim(3) (malloc.h, which the toolchain's Glibc module leaves out):
// what a freed frame leaves in the heap goes back to the system.
extern int malloc_trim(size_t pad);
static inline int passlock_malloc_trim(void) { return malloc_trim(0); }
