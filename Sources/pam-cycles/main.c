/*
 * pam-cycles: a C PAM host for tests. Runs N transactions (pam_start_confdir,
 * pam_authenticate, pam_end) in one process, answering every prompt with the
 * given token, so each cycle loads and unloads the modules of SERVICE.
 *
 *   pam-cycles CONFDIR SERVICE USER TOKEN N
 *
 * Prints one line: "<successes> <failures>"; exits 0 when every cycle succeeded.
 */
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int answer(int n, const struct pam_message **msg, struct pam_response **resp, void *token) {
  struct pam_response *replies = calloc((size_t)n, sizeof *replies);
  if (replies == NULL) return PAM_BUF_ERR;
  for (int i = 0; i < n; i++) {
    int style = msg[i]->msg_style;
    if (style == PAM_PROMPT_ECHO_OFF || style == PAM_PROMPT_ECHO_ON) replies[i].resp = strdup(token);
  }
  *resp = replies;
  return PAM_SUCCESS;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: pam-cycles CONFDIR SERVICE USER TOKEN N\n");
    return 64;
  }
  struct pam_conv conv = {answer, argv[4]};
  int cycles = atoi(argv[5]), successes = 0;
  for (int i = 0; i < cycles; i++) {
    pam_handle_t *pamh = NULL;
    int rc = pam_start_confdir(argv[2], argv[3], &conv, argv[1], &pamh);
    /* As login on a console: a root host offers the passcode only on a terminal of this machine. */
    if (rc == PAM_SUCCESS) rc = pam_set_item(pamh, PAM_TTY, "/dev/tty1");
    if (rc == PAM_SUCCESS) rc = pam_authenticate(pamh, 0);
    if (rc == PAM_SUCCESS) successes++;
    if (pamh != NULL) pam_end(pamh, rc);
  }
  printf("%d %d\n", successes, cycles - successes);
  return successes == cycles ? 0 : 1;
}
