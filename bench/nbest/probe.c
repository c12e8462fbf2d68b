/* Would PocketSphinx's n-best list judge the end of a turn better than its best path?
 * probe MODEL_DIR WAV PAUSE_AT_S PAUSE_S: decodes WAV in 20 ms periods with the English model
 * in MODEL_DIR (Debian's pocketsphinx-en-us) and the product's search settings. With PAUSE_AT_S > 0, PAUSE_S of the recording's own room tone (its first
 * 100 ms, repeated) is inserted there, and 200 ms into it (likely_end_ms) the pause is judged;
 * otherwise the end is judged 200 ms after the recording (room tone appended). A judgement is
 * P(</s> | the last two words), as the product computes it, for the best path and for each of
 * the top 10 n-best entries mid-utterance (ps_nbest). Prints one line per judgement. */
#include <pocketsphinx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double endProbability(ps_decoder_t *ps, const char *hyp) {
    char buf[8192];
    snprintf(buf, sizeof buf, "%s", hyp ? hyp : "");
    char *w[1024];
    int k = 0;
    for (char *t = strtok(buf, " "); t && k < 1024; t = strtok(NULL, " ")) {
        if (t[0] == '<' || t[0] == '[' || t[0] == '+') continue;
        char *mark = strchr(t, '(');
        if (mark) *mark = 0;
        w[k++] = t;
    }
    if (k == 0) return 0;
    const char *history[3] = {"</s>", w[k - 1], k > 1 ? w[k - 2] : "<s>"};
    return logmath_exp(ps_get_logmath(ps), ngram_prob(ps_get_lm(ps, "_default"), history, 3));
}

static void judge(ps_decoder_t *ps, const char *label) {
    int32 score;
    const char *best = ps_get_hyp(ps, &score);
    double pBest = endProbability(ps, best), sum = 0, max = 0;
    int n = 0;
    for (ps_nbest_t *nb = ps_nbest(ps); nb && n < 10; nb = ps_nbest_next(nb), n++) {
        double p = endProbability(ps, ps_nbest_hyp(nb, &score));
        sum += p;
        if (p > max) max = p;
    }
    printf("%s best %.3f  n-best mean %.3f  max %.3f  | %s\n", label, pBest, n ? sum / n : 0, max, best ? best : "");
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: probe MODEL_DIR WAV PAUSE_AT_S PAUSE_S\n"); return 2; }
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 1; }
    fseek(f, 0, SEEK_END);
    long n = (ftell(f) - 44) / 2;
    short *wav = malloc(n * sizeof *wav);
    fseek(f, 44, SEEK_SET);
    if (fread(wav, sizeof *wav, n, f) != (size_t)n) { fprintf(stderr, "short read\n"); return 1; }
    fclose(f);
    char hmm[512], lm[512], dict[512];
    snprintf(hmm, sizeof hmm, "%s/en-us", argv[1]);
    snprintf(lm, sizeof lm, "%s/en-us.lm.bin", argv[1]);
    snprintf(dict, sizeof dict, "%s/cmudict-en-us.dict", argv[1]);
    cmd_ln_t *config = cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", hmm, "-lm", lm, "-dict", dict, "-logfn", "/dev/null",
        "-samprate", "16000", "-fwdflat", "no", "-maxhmmpf", "4000", "-maxwpf", "10", NULL);
    ps_decoder_t *ps = ps_init(config);
    if (!ps) { fprintf(stderr, "no decoder\n"); return 1; }
    const long period = 320, tone = 1600, judgeAt = 3200; /* 20 ms, 100 ms, 200 ms */
    long pauseAt = atof(argv[3]) > 0 ? (long)(atof(argv[3]) * 16000) / period * period : -1;
    long pauseLength = (long)(atof(argv[4]) * 16000);
    short chunk[320];
    ps_start_utt(ps);
    for (long i = 0; i < n; i += period) {
        if (i == pauseAt)
            for (long j = 0; j < pauseLength; j += period) {
                for (long q = 0; q < period; q++) chunk[q] = wav[(j + q) % tone];
                ps_process_raw(ps, chunk, period, FALSE, FALSE);
                if (j + period == judgeAt) judge(ps, "pause");
            }
        ps_process_raw(ps, wav + i, n - i < period ? n - i : period, FALSE, FALSE);
    }
    if (pauseAt < 0)
        for (long j = 0; j < judgeAt; j += period) {
            for (long q = 0; q < period; q++) chunk[q] = wav[(j + q) % tone];
            ps_process_raw(ps, chunk, period, FALSE, FALSE);
        }
    if (pauseAt < 0) judge(ps, "end");
    ps_free(ps);
    return 0;
}
