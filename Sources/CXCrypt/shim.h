#include <crypt.h>
// getspnam_r: a root PAM host checks a password it was given (ShadowPassword).
#include <shadow.h>
