#include "program-arguments.h"

// glibc calls the program's .init_array functions with main's argc, argv and
// envp before main: this one keeps the first two.
static int saved_count;
static char **saved_arguments;

static void save_arguments(int count, char **arguments, char **environment) {
  (void)environment;
  saved_count = count;
  saved_arguments = arguments;
}

__attribute__((section(".init_array"), used)) static void (*const save_arguments_at_start)(int, char **, char **) =
  save_arguments;

int passlock_argument_count(void) { return saved_count; }
char **passlock_arguments(void) { return saved_arguments; }
