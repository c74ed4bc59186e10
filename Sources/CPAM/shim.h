#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <security/pam_ext.h>
