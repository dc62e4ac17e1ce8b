/* INCRBYFLOAT oracle with the machine long double, as Redis computes it (string2ld, +, ld2string HUMAN).
 * gcc -O2 -o ld_oracle ld_oracle.c -lm && ./ld_oracle < pairs.txt */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <errno.h>
#include <ctype.h>
static int string2ld(const char *s, size_t slen, long double *dp) {
    char buf[5*1024]; long double value; char *eptr;
    if (slen == 0 || slen >= sizeof(buf)) return 0;
    memcpy(buf,s,slen); buf[slen] = '\0';
    errno = 0;
    value = strtold(buf, &eptr);
    if (isspace(buf[0]) || eptr[0] != '\0' ||
        ((errno == ERANGE) && (value == HUGE_VAL || value == -HUGE_VAL || fpclassify(value) == FP_ZERO)) ||
        errno == EINVAL || isnan(value)) return 0;
    if (dp) *dp = value;
    return 1;
}
int main(void) {
    static char a[8000], b[8000], buf[8000];
    while (scanf("%7999s %7999s", a, b) == 2) {
        long double x, y;
        if (!string2ld(a, strlen(a), &x) || !string2ld(b, strlen(b), &y)) { puts("ERR"); continue; }
        long double v = x + y;
        if (isnan(v) || isinf(v)) { puts("NANINF"); continue; }
        int l = snprintf(buf, sizeof buf, "%.17Lf", v);
        if (strchr(buf, '.') != NULL) { char *p = buf + l - 1; while (*p == '0') { p--; l--; } if (*p == '.') l--; }
        if (l == 2 && buf[0] == '-' && buf[1] == '0') { buf[0] = '0'; l = 1; }
        buf[l] = 0; puts(buf);
    }
    return 0;
}
