#!/usr/bin/env python3
"""Reference Bradley-Terry fit for tests/unit/test_rank_bradley_terry.cpp.

Independent of gate's MM iteration: maximizes the log-likelihood directly
by Newton's method on log-strengths, with the anchor's log-strength held at
0, then prints Elo = 1000 + 400/ln(10) * log-strength, one "name elo" line
per player. Its output is committed as bt_reference.txt:

    python3 tests/data/rank/bt_reference.py > tests/data/rank/bt_reference.txt

Data: three players, draws counted as half a win for each side.
  A-B: A won 7, B won 3, 2 draws
  B-C: B won 6, C won 4
  A-C: A won 8, C won 2
"""
import math

names = ["A", "B", "C"]
anchor = 1  # B
wins = {(0, 1): 7, (1, 0): 3, (1, 2): 6, (2, 1): 4, (0, 2): 8, (2, 0): 2}
draws = {(0, 1): 2}

n = len(names)
games = [[0.0] * n for _ in range(n)]
score = [0.0] * n
for (i, j), w in wins.items():
    games[i][j] += w
    games[j][i] += w
    score[i] += w
for (i, j), d in draws.items():
    games[i][j] += d
    games[j][i] += d
    score[i] += d / 2
    score[j] += d / 2

theta = [0.0] * n
free = [i for i in range(n) if i != anchor]
for _ in range(100):
    grad = [0.0] * n
    hess = [[0.0] * n for _ in range(n)]
    for i in range(n):
        grad[i] = score[i]
        for j in range(n):
            if i == j or games[i][j] == 0:
                continue
            p = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
            grad[i] -= games[i][j] * p
            hess[i][i] -= games[i][j] * p * (1 - p)
            hess[i][j] += games[i][j] * p * (1 - p)
    # Solve H d = -g over the free players (Gaussian elimination).
    a = [[hess[i][j] for j in free] + [-grad[i]] for i in free]
    m = len(free)
    for c in range(m):
        pivot = max(range(c, m), key=lambda r: abs(a[r][c]))
        a[c], a[pivot] = a[pivot], a[c]
        for r in range(m):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    step = [a[r][m] / a[r][r] for r in range(m)]
    for k, i in enumerate(free):
        theta[i] += step[k]
    if max(abs(s) for s in step) < 1e-14:
        break

for i, name in enumerate(names):
    print(f"{name} {1000 + 400 / math.log(10) * (theta[i] - theta[anchor]):.9f}")
