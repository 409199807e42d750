/* TestU01's SmallCrush battery on 32-bit words read from stdin (little-endian), as
 * `cargo run --release -p rucuda-rand --example stream -- GENERATOR` writes them.
 * Build: cc -O2 smallcrush.c -o smallcrush -ltestu01 -lprobdist -lmylib -lm */
#include <stdio.h>
#include <stdlib.h>

#include "bbattery.h"
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
    return 0;
}
