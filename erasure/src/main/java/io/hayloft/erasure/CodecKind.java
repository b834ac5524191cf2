package io.hayloft.erasure;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The erasure codes Hayloft implements; {@link #wireName()} is what manifests and the CLI say. */
public enum CodecKind {
    /** Systematic Reed-Solomon with the Cauchy matrix of ISA-L and Hadoop. */
    RS("rs"),
    /** Hitchhiker-XOR: piggybacks are XORs of the first substripes of groups covering every data unit. */
    HH_XOR("hh-xor"),
    /** Hitchhiker-XOR+: parity row 1 scaled to all ones, last data unit ungrouped, P1 coupled. */
    HH_XOR_PLUS("hh-xor+"),
    /** Hitchhiker-nonXOR: piggybacks are partial sums of parity function 1, P1 coupled. */
    HH_NONXOR("hh-nonxor");

    private final String wireName;

    CodecKind(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    public boolean isHitchhiker() {
        return this != RS;
    }

    /** Parses a wire name ({@code rs}, {@code hh-xor}, {@code hh-xor+}, {@code hh-nonxor}), case-insensitively. */
    public static CodecKind fromWireName(String name) {
        String n = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        for (CodecKind k : values()) {
            if (k.wireName.equals(n)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown codec '" + name + "'; expected one of "
                + Arrays.stream(values()).map(CodecKind::wireName).collect(Collectors.joining(", ")));
    }

    @Override
    public String toString() {
        return wireName;
    }
}
