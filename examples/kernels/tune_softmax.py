# Exercise 2 (docs/tutorial.md): a softmax over narrow rows, where the
# default schedule's 4 x 16-lane accumulators are wider than a row.
#   mtc --tune 64 --tuning-log tuned.jsonl examples/kernels/tune_softmax.py
#   mtc --tuning-log tuned.jsonl --random --bench 100 examples/kernels/tune_softmax.py
def softmax_rows(x: Tensor(shape=(8192, 7), dtype="float32")):
    return softmax(x, axis=-1)
