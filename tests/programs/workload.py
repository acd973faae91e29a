# A mixed Python workload: containers, strings, json, regex, sorting, classes and threads.
# Prints checksums only, so runs under different allocators can be compared.
# With a FIFO path as argument, it stops halfway (its data built, still live): it writes
# "ready" into the FIFO, then waits until something is written back (the main job's vminfo).
import hashlib, json, re, sys, threading, collections

h = hashlib.sha256()
d = {f"key{i}": [i, str(i) * (i % 7), {"n": i}] for i in range(150000)}
s = json.dumps(d, sort_keys=True)
h.update(s.encode())
back = json.loads(s)
h.update(str(len(back)).encode())
words = re.findall(r"key(\d+)", s)
h.update(",".join(sorted(words, key=lambda w: (len(w), w))[:5000]).encode())

class Node:
    __slots__ = ("v", "kids")
    def __init__(self, v):
        self.v = v
        self.kids = []

root = Node(0)
stack = [root]
for i in range(1, 200000):
    n = Node(i)
    stack[i % len(stack)].kids.append(n)
    if i % 3 == 0:
        stack.append(n)
total = 0
todo = [root]
while todo:
    n = todo.pop()
    total += n.v
    todo.extend(n.kids)
h.update(str(total).encode())

if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as fifo:
        fifo.write("ready\n")
    with open(sys.argv[1]) as fifo:
        fifo.read()

results = [None] * 8
def work(k):
    c = collections.Counter()
    for i in range(40000):
        c[(i * k) % 977] += len(str(i * k))
    results[k] = sum(v * key for key, v in c.items())
threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in threads: t.start()
for t in threads: t.join()
h.update(str(results).encode())
big = bytearray()
for i in range(2000):
    big += bytes(i % 251 for _ in range(i % 700))
h.update(bytes(big))
print(h.hexdigest())
