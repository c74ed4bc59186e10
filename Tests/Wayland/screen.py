"""What a screenshot (grim -t ppm, binary P6) shows, for Tests/Wayland/run.

  screen.py lock FILE     exit 0 when it is passlock's lock screen: its
                          background in the corner, text and keys on it, and
                          not one pixel of the desktop (its green background,
                          pure or shaded as labwc's swaybg draws it, and
                          foot's #0000ff) or of sway's red for a dead locker
  screen.py desktop FILE  exit 0 when the desktop shows in the corner
  screen.py hidden FILE   exit 0 when not one pixel of the desktop shows
  screen.py same A B      exit 0 when A and B (same size) differ in under 0.5 %
                          of their pixels (by more than 48 in a channel)
  screen.py pixel FILE    prints the corner pixel as "R G B"
  screen.py warning FILE  prints how many pixels are of a warning's red
                          (the theme's error colour, and text shaded from it)
  screen.py keys FILE     prints where the keypad's digits are, "DIGIT X Y"
                          a line, found as the screen shows them: the round
                          keys are the most common colour but the background,
                          in a 3×4 grid (the 0 alone in the bottom row)
"""
import sys

BACKGROUND = (0x15, 0x18, 0x1D)  # SurfacePalette.background


def is_desktop(pixel):
    red, green, blue = pixel
    return red == 0 and ((green > 0 and blue == 0) or (green == 0 and blue == 255))


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, position = [], 0
    while len(fields) < 4:  # P6, width, height, maxval
        while data[position:position + 1].isspace():
            position += 1
        start = position
        while not data[position:position + 1].isspace():
            position += 1
        fields.append(data[start:position])
    width, height = int(fields[1]), int(fields[2])
    pixels = data[position + 1:position + 1 + width * height * 3]
    return width, height, pixels


def groups(values, gap):
    """Runs of sorted values without a gap wider than `gap`: (first, last) each."""
    runs = []
    for value in sorted(set(values)):
        if runs and value - runs[-1][1] <= gap:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    return runs


def keys(width, height, pixels):
    counts = {}
    for i in range(0, len(pixels), 3):
        pixel = (pixels[i], pixels[i + 1], pixels[i + 2])
        if pixel != BACKGROUND:
            counts[pixel] = counts.get(pixel, 0) + 1
    fill = max(counts, key=counts.get)
    xs, ys = [], []
    for i in range(0, len(pixels), 3):
        if (pixels[i], pixels[i + 1], pixels[i + 2]) == fill:
            xs.append(i // 3 % width)
            ys.append(i // 3 // width)
    columns, rows = groups(xs, 2), groups(ys, 2)
    if len(columns) != 3 or len(rows) != 4:
        print("no 3x4 keypad: columns %s rows %s" % (columns, rows), file=sys.stderr)
        return 1
    layout = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [None, 0, None]]
    for r, (top, bottom) in enumerate(rows):
        for c, (left, right) in enumerate(columns):
            if layout[r][c] is not None:
                print(layout[r][c], (left + right) // 2, (top + bottom) // 2)
    return 0


def main():
    what, path = sys.argv[1], sys.argv[2]
    width, height, pixels = read(path)
    if what == "same":
        other_width, other_height, other = read(sys.argv[3])
        if (other_width, other_height) != (width, height):
            print("sizes differ: %dx%d, %dx%d" % (width, height, other_width, other_height), file=sys.stderr)
            return 1
        differ = sum(1 for i in range(0, len(pixels), 3)
                     if max(abs(pixels[i + k] - other[i + k]) for k in range(3)) > 48)
        print("%d of %d pixels differ" % (differ, width * height), file=sys.stderr)
        if differ >= 0.005 * width * height:
            print("%d of %d pixels differ" % (differ, width * height), file=sys.stderr)
            return 1
        return 0
    corner = tuple(pixels[(2 * width + 2) * 3:(2 * width + 2) * 3 + 3])
    if what == "warning":
        print(sum(1 for i in range(0, len(pixels), 3)
                  if pixels[i] > 180 and pixels[i + 1] < 90 and pixels[i + 2] < 90))
        return 0
    if what == "keys":
        return keys(width, height, pixels)
    if what == "pixel":
        print(*corner)
        return 0
    if what == "desktop":
        return 0 if is_desktop(corner) else 1
    if what == "hidden":
        shown = sum(1 for i in range(0, len(pixels), 3) if is_desktop((pixels[i], pixels[i + 1], pixels[i + 2])))
        if shown:
            print("%d pixels of the desktop show" % shown, file=sys.stderr)
        return 0 if shown == 0 else 1
    count = width * height
    background = desktop = red = 0
    for i in range(0, count * 3, 3):
        pixel = (pixels[i], pixels[i + 1], pixels[i + 2])
        if pixel == BACKGROUND:
            background += 1
        elif is_desktop(pixel):
            desktop += 1
        elif pixel == (255, 0, 0):
            red += 1
    drawn = count - background
    ok = corner == BACKGROUND and desktop == 0 and red == 0 and 0.005 * count < drawn < 0.4 * count
    if not ok:
        print("corner %s, background %d, desktop %d, red %d of %d pixels" % (corner, background, desktop, red, count),
              file=sys.stderr)
    return 0 if ok else 1


sys.exit(main())
