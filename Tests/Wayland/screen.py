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
