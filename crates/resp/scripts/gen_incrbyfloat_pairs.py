# Random "current increment" pairs for INCRBYFLOAT checks: python3 gen_incrbyfloat_pairs.py SEED COUNT > pairs.txt
import random, sys
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
def num():
    r = random.random()
    sign = random.choice(["", "-", "", "+"]) if random.random() < 0.5 else ""
    if r < 0.15:
        return sign + str(random.randint(0, 10**random.randint(1, 19)))
    if r < 0.6:
        i = str(random.randint(0, 10**random.randint(0, 12)))
        f = "".join(random.choice("0123456789") for _ in range(random.randint(1, 20)))
        return sign + i + "." + f
    if r < 0.8:
        m = str(random.randint(1, 10**random.randint(1, 25)))
        return sign + m[0] + "." + m[1:] + "e" + str(random.randint(-40, 40)) if len(m) > 1 else sign + m + "e" + str(random.randint(-40, 40))
    if r < 0.88:
        return sign + str(random.randint(1, 99)) + "e" + str(random.choice([300, -300, 4000, -4000, 4931, 4932, 4933, -4931, -4932, -4940, -4960, 5000]))
    if r < 0.93:
        return sign + "0x" + "".join(random.choice("0123456789abcdef") for _ in range(random.randint(1, 20))) + random.choice(["", "p3", "p-70", ".8p1"])
    if r < 0.96:
        # near-ties: 2^k sums
        return sign + repr(random.random() * 2**random.randint(-80, 80))
    return random.choice(["inf", "-inf", "nan", "1e", "abc", "0", "-0", ".5", "5.", "1e+5", "1E-5", "0.1", "10.5", "3.0000000000000004"])
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 20000):
    print(num(), num())
