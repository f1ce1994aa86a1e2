package dev.lantern.kernel;

import java.util.List;

/** Tile sizes by axis name, in the order the loop nest uses them, such as {@code mc=120 nc=256 kc=256 mr=6 nr=16}. */
public record Tile(List<String> names, List<Integer> sizes) {
    public Tile {
        names = List.copyOf(names);
        sizes = List.copyOf(sizes);
        if (names.size() != sizes.size()) {
            throw new IllegalArgumentException("tile names " + names + " and sizes " + sizes + " differ in length");
        }
    }

    public static Tile of(Object... nameSize) {
        List<String> n = new java.util.ArrayList<>();
        List<Integer> s = new java.util.ArrayList<>();
        for (int i = 0; i < nameSize.length; i += 2) {
            n.add((String) nameSize[i]);
            s.add((Integer) nameSize[i + 1]);
        }
        return new Tile(n, s);
    }

    public int size(String name) {
        int i = names.indexOf(name);
        return i < 0 ? 0 : sizes.get(i);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < names.size(); i++) {
            b.append(i == 0 ? "" : " ").append(names.get(i)).append('=').append(sizes.get(i));
        }
        return b.toString();
    }
}
