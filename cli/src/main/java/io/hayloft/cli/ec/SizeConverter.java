package io.hayloft.cli.ec;

import java.util.Locale;
import picocli.CommandLine;

/**
 * Parses byte sizes such as {@code 256m}, {@code 4k}, {@code 1g} or {@code 65536}: a decimal number
 * followed by an optional binary suffix {@code k} (KiB), {@code m} (MiB), {@code g} (GiB) or
 * {@code t} (TiB), with an optional trailing {@code b}/{@code ib} ({@code 4KiB}, {@code 16MB} both
 * mean binary units). Stateless and thread-safe.
 */
public final class SizeConverter implements CommandLine.ITypeConverter<Long> {

    @Override
    public Long convert(String value) {
        try {
            return parse(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }

    /**
     * The number of bytes {@code text} names.
     *
     * @throws IllegalArgumentException naming the text when it is not a size or overflows a long
     */
    public static long parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("size is empty; expected e.g. 64k, 16m, 1g or 4096");
        }
        String s = text.trim().toLowerCase(Locale.ROOT);
        if (s.endsWith("ib")) {
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("b")) {
            s = s.substring(0, s.length() - 1);
        }
        int shift = 0;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'k': shift = 10; break;
                case 'm': shift = 20; break;
                case 'g': shift = 30; break;
                case 't': shift = 40; break;
                default: break;
            }
        }
        String digits = shift == 0 ? s : s.substring(0, s.length() - 1);
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("invalid size '" + text + "'; expected a whole number with an optional"
                    + " unit k, m, g or t (e.g. 64k, 16m, 256m, 1g)");
        }
        long n;
        try {
            n = Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("size '" + text + "' is too large");
        }
        if (shift > 0 && n > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("size '" + text + "' is too large");
        }
        return n << shift;
    }

    /** A size for people: {@code 268435456} is {@code 256 MiB}, {@code 1536} is {@code 1.5 KiB}. */
    public static String format(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return (v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v))
                + " " + units[u];
    }
}
