package io.hayloft.format.wire;

import java.util.HexFormat;

/**
 * Everything needed to read one photo (one needle): logical volume, key, alternate key and cookie.
 * Its text form, used on the command line and in URLs, is {@code volume,key,alt,cookie} with the
 * cookie as 16 hex digits, e.g. {@code 3,1234,0,8f3a1b2c3d4e5f60}.
 */
public record PhotoId(int volume, long key, int alt, long cookie) {

    public PhotoId {
        if (volume < 1) {
            throw new IllegalArgumentException("volume must be >= 1, was " + volume);
        }
        if (key < 0) {
            throw new IllegalArgumentException("key must be >= 0, was " + key);
        }
    }

    /**
     * Parses {@code volume,key,alt,cookie}.
     *
     * @throws IllegalArgumentException naming what is wrong with the text
     */
    public static PhotoId parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("photo id is missing");
        }
        String[] p = text.trim().split(",", -1);
        if (p.length != 4) {
            throw new IllegalArgumentException("malformed photo id '" + text + "': expected volume,key,alt,cookie (4 fields), got " + p.length);
        }
        try {
            return new PhotoId(Integer.parseInt(p[0]), Long.parseLong(p[1]), Integer.parseInt(p[2]),
                    Long.parseUnsignedLong(p[3], 16));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("malformed photo id '" + text + "': " + e.getMessage());
        }
    }

    public PhotoId withAlt(int otherAlt) {
        return new PhotoId(volume, key, otherAlt, cookie);
    }

    /**
     * The needle path on a store: {@code /<volume>/<key>/<alt>?cookie=<hex>}, the alternate key as
     * an unsigned decimal (the stores' form: alternate keys span the whole 32-bit range).
     */
    public String needlePath() {
        return "/" + volume + "/" + key + "/" + Integer.toUnsignedString(alt) + "?cookie=" + cookieHex();
    }

    public String cookieHex() {
        return hex16(cookie);
    }

    /** {@code value} as 16 lower-case hex digits (a cookie's text form), without a {@link java.util.Formatter}. */
    public static String hex16(long value) {
        return HEX.toHexDigits(value);
    }

    private static final HexFormat HEX = HexFormat.of();

    @Override
    public String toString() {
        return volume + "," + key + "," + alt + "," + cookieHex();
    }
}
