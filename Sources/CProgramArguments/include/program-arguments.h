// The program's arguments as the C library received them, for
// passlock-wayland: Embedded Swift has no CommandLine.
int passlock_argument_count(void);
char **passlock_arguments(void);
