"""scripts/order-from-trace.py SYMBOLS ORDER RUN…: the link order file ORDER
from trace-functions' RUN files (hex addresses, in the order they first
ran) and SYMBOLS (`address name` per line, readelf's FUNC symbols): each
function once, in the order it first ran, the first RUN's first. For
scripts/daemon-order and scripts/wayland-lock-screen-order."""
import sys

symbols, order_file, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
names = {}
for line in open(symbols):
    address, name = line.split()
    names.setdefault(int(address, 16), name)
order = {}  # a dict keeps insertion order: the order they first ran
for run in runs:
    for line in open(run):
        order.setdefault(names[int(line, 16)], None)
with open(order_file, "w") as file:
    file.writelines(name + "\n" for name in order)
print(f"{order_file}: {len(order)} functions")
