/* TestU01's SmallCrush battery on 32-bit words read from stdin (little-endian), as
 * `cargo run --release -p rucuda-rand --example stream -- GENERATOR` writes them.
 *
 * `cargo xtask testu01` builds and runs this (see README.md here). By hand, against an
 * upstream TestU01 installation:
 *   cc -O2 smallcrush.c -o smallcrush -ltestu01 -lprobdist -lmylib -lm
 *
 * After TestU01's own report, one line per statistic for the xtask to read:
 *   rucuda-smallcrush<TAB>suspectp<TAB>P          (a test fails outside [P, 1 - P])
 *   rucuda-smallcrush<TAB>pvalue<TAB>I<TAB>P<TAB>NAME   (statistic I, from 1) */
#include <stdio.h>
#include <stdlib.h>

#include "bbattery.h"
#include "gofw.h"
#include "unif01.h"

#define WORDS 65536
static unsigned int buffer[WORDS];
static size_t have = 0, next = 0;

static unsigned int next_word(void)
{
    if (next == have) {
        have = fread(buffer, sizeof buffer[0], WORDS, stdin);
        next = 0;
        if (have == 0) {
            fprintf(stderr, "smallcrush: the stream ended\n");
            exit(2);
        }
    }
    return buffer[next++];
}

int main(int argc, char** argv)
{
    char* name = argc > 1 ? argv[1] : "rucuda-rand";
    unif01_Gen* gen = unif01_CreateExternGenBits(name, next_word);
    bbattery_SmallCrush(gen);
    unif01_DeleteExternGenBits(gen);

    printf("rucuda-smallcrush\tsuspectp\t%.17g\n", gofw_Suspectp);
    for (int i = 0; i < bbattery_NTests; i++) {
        if (bbattery_pVal[i] < 0.0) {
            continue; /* a statistic SmallCrush did not compute */
        }
        printf("rucuda-smallcrush\tpvalue\t%d\t%.17g\t%s\n", i + 1, bbattery_pVal[i],
            bbattery_TestNames[i]);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
