// The addresses of the protocol interfaces passlock-wayland binds.
// libwayland keeps the pointer it is given for the proxy's whole life and
// Swift can only copy an imported C constant, so the addresses come from C.
#include <wayland-client.h>
#include "ext-session-lock-v1-client-protocol.h"

static inline const struct wl_interface *passlock_wl_compositor_interface(void) { return &wl_compositor_interface; }
static inline const struct wl_interface *passlock_wl_shm_interface(void) { return &wl_shm_interface; }
static inline const struct wl_interface *passlock_wl_seat_interface(void) { return &wl_seat_interface; }
static inline const struct wl_interface *passlock_wl_output_interface(void) { return &wl_output_interface; }
static inline const struct wl_interface *passlock_ext_session_lock_manager_v1_interface(void) {
  return &ext_session_lock_manager_v1_interface;
}
