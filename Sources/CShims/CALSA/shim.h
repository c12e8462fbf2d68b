#include <alsa/asoundlib.h>

/* alsa-lib prints its own diagnostics to stderr ("ALSA lib confmisc.c: ..."). Parley reports
   every failure itself, with snd_strerror and what to do, in one log line; these extra lines
   would only split that message in the journal. */
static void parley_alsa_silent(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void parley_alsa_quiet(void) {
    snd_lib_error_set_handler(parley_alsa_silent);
}
