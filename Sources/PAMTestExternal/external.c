/*
 * A stand-in for pam_fprintd in tests (built by the package, never installed).
 *
 *   auth required pam_passlock_test_external.so control=/path/to/dir
 *
 * Sends "Place your finger on the reader", writes its pid to DIR/started,
 * then waits for DIR/result and returns what it names: success, auth_err,
 * unavail, maxtries, or hang (wait until killed). The file is consumed.
 * PAM_TTY, as the module sees it, goes to DIR/tty.
 */
#include <security/pam_modules.h>
#include <security/pam_ext.h>
#include <security/_pam_types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int say(pam_handle_t *pamh, const char *text) {
  const struct pam_conv *conv = NULL;
  if (pam_get_item(pamh, PAM_CONV, (const void **)&conv) != PAM_SUCCESS || conv == NULL) return PAM_CONV_ERR;
  struct pam_message message = {PAM_TEXT_INFO, text};
  const struct pam_message *messages = &message;
  struct pam_response *response = NULL;
  int rc = conv->conv(1, &messages, &response, conv->appdata_ptr);
  if (response != NULL) {
    free(response->resp);
    free(response);
  }
  return rc;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)flags;
  const char *dir = NULL;
  for (int i = 0; i < argc; i++)
    if (strncmp(argv[i], "control=", 8) == 0) dir = argv[i] + 8;
  if (dir == NULL) return PAM_SERVICE_ERR;
  say(pamh, "Place your finger on the reader");
  char path[4096];
  snprintf(path, sizeof path, "%s/started", dir);
  FILE *started = fopen(path, "w");
  if (started != NULL) {
    fprintf(started, "%d\n", (int)getpid());
    fclose(started);
  }
  const void *tty = NULL;
  snprintf(path, sizeof path, "%s/tty", dir);
  FILE *ttyFile = fopen(path, "w");
  if (ttyFile != NULL) {
    if (pam_get_item(pamh, PAM_TTY, &tty) == PAM_SUCCESS && tty != NULL) fputs((const char *)tty, ttyFile);
    fclose(ttyFile);
  }
  snprintf(path, sizeof path, "%s/result", dir);
  for (;;) {
    FILE *control = fopen(path, "r");
    if (control != NULL) {
      char word[32] = {0};
      if (fgets(word, sizeof word, control) == NULL) word[0] = 0;
      fclose(control);
      word[strcspn(word, "\n")] = 0;
      /* Empty: opened between its writer's truncate and write; read it again. */
      if (word[0] == 0) {
        usleep(10000);
        continue;
      }
      if (strcmp(word, "hang") != 0) unlink(path);
      if (strcmp(word, "success") == 0) return PAM_SUCCESS;
      if (strcmp(word, "auth_err") == 0) return PAM_AUTH_ERR;
      if (strcmp(word, "unavail") == 0) return PAM_AUTHINFO_UNAVAIL;
      if (strcmp(word, "maxtries") == 0) return PAM_MAXTRIES;
    }
    usleep(10000);
  }
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)pamh, (void)flags, (void)argc, (void)argv;
  return PAM_SUCCESS;
}
