#include <espeak-ng/speak_lib.h>
#include <espeak-ng/espeak_ng.h>
