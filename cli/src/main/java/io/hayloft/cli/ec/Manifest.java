package io.hayloft.cli.ec;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hayloft.erasure.CodecKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * {@code DIR/manifest.json}: what {@code hayloft ec encode} wrote into {@code DIR}. It is written last,
 * atomically (temp file, fsync, rename, directory fsync), so its presence means every block it lists
 * was written and fsynced. Immutable and thread-safe.
 *
 * <p>Format version 1, a JSON object (UTF-8); readers refuse any other {@code format} or
 * {@code version}:
 * <pre>
 * | field         | type   | meaning                                                               |
 * |---------------|--------|-----------------------------------------------------------------------|
 * | format        | string | always "hayloft-ec-manifest"                                          |
 * | version       | int    | 1                                                                     |
 * | codec         | string | rs, hh-xor, hh-xor+ or hh-nonxor                                      |
 * | k, r          | int    | data and parity blocks per stripe                                     |
 * | blockSize     | long   | bytes per block (even for hh-*)                                        |
 * | length        | long   | bytes of the original file                                            |
 * | stripes       | long   | ceil(length / (k * blockSize)), 0 for an empty file                    |
 * | fileCrc32c    | string | CRC32C of the whole original file, 8 lowercase hex digits              |
 * | source        | string | original file name (information only)                                 |
 * | blocks        | array  | one object per block file, stripe-major, unit order:                  |
 * |   .file       | string | s{stripe:06}-d{j:02}.blk or s{stripe:06}-p{i:02}.blk                   |
 * |   .stripe     | long   | stripe number, from 0                                                  |
 * |   .index      | int    | unit in the stripe: 0..k-1 data, k..k+r-1 parity (p{i} is k+i)         |
 * |   .role       | string | "data" or "parity"                                                    |
 * |   .length     | long   | bytes in the file (blockSize, or less for the file's last data block)  |
 * |   .crc32c     | string | CRC32C of the block file's bytes, 8 lowercase hex digits               |
 * </pre>
 * Data blocks that lie wholly past the end of the file are zeros by definition and are neither
 * written nor listed (see {@link StripeLayout}). A reader checks that the block list is exactly the
 * one the layout implies, with canonical file names, so a manifest cannot point outside its directory.
 * The manifest has no checksum of its own: a syntax error or an inconsistent field is reported as a
 * corrupt manifest, a changed CRC value shows up as a damaged block.
 */
public final class Manifest {

    public static final String FILE_NAME = "manifest.json";
    public static final String FORMAT = "hayloft-ec-manifest";
    public static final int VERSION = 1;

    /** One block file. {@code unit} is the index in the stripe (0..k-1 data, k..k+r-1 parity). */
    public record Block(String file, long stripe, int unit, boolean data, long length, int crc32c) {
        public String crcHex() {
            return hex(crc32c);
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final CodecKind codec;
    private final StripeLayout layout;
    private final int fileCrc32c;
    private final String source;
    private final Block[] blocks; // stripe * (k + r) + unit; null where no file

    public Manifest(CodecKind codec, StripeLayout layout, int fileCrc32c, String source, List<Block> blockList) {
        this.codec = codec;
        this.layout = layout;
        this.fileCrc32c = fileCrc32c;
        this.source = source == null ? "" : source;
        checkBlockSize(codec, layout.blockSize());
        long slots = layout.stripes() * layout.totalUnits();
        if (slots > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("too many blocks (" + slots + "); use a larger block size");
        }
        this.blocks = new Block[(int) slots];
        for (Block b : blockList) {
            if (b.stripe() < 0 || b.stripe() >= layout.stripes() || b.unit() < 0 || b.unit() >= layout.totalUnits()) {
                throw new IllegalArgumentException("block " + b.file() + " has stripe " + b.stripe() + " unit "
                        + b.unit() + " outside the layout (" + layout.stripes() + " stripes of "
                        + layout.totalUnits() + " units)");
            }
            String expected = layout.fileName(b.stripe(), b.unit());
            if (!expected.equals(b.file())) {
                throw new IllegalArgumentException("block file '" + b.file() + "' should be named '" + expected + "'");
            }
            if (b.data() != layout.isData(b.unit())) {
                throw new IllegalArgumentException("block " + b.file() + " has role " + (b.data() ? "data" : "parity")
                        + " but unit " + b.unit() + " is " + (layout.isData(b.unit()) ? "data" : "parity"));
            }
            long len = layout.storedLength(b.stripe(), b.unit());
            if (b.length() != len) {
                throw new IllegalArgumentException("block " + b.file() + " has length " + b.length()
                        + " but the layout says " + len);
            }
            int slot = slot(b.stripe(), b.unit());
            if (blocks[slot] != null) {
                throw new IllegalArgumentException("block " + b.file() + " is listed twice");
            }
            blocks[slot] = b;
        }
        for (long s = 0; s < layout.stripes(); s++) {
            for (int u = 0; u < layout.totalUnits(); u++) {
                if (layout.hasFile(s, u) && blocks[slot(s, u)] == null) {
                    throw new IllegalArgumentException("block " + layout.fileName(s, u) + " is not listed");
                }
            }
        }
    }

    /** Rejects an odd block size for a Hitchhiker code, which splits every block in two halves. */
    public static void checkBlockSize(CodecKind codec, long blockSize) {
        if (codec.isHitchhiker() && blockSize % 2 != 0) {
            throw new IllegalArgumentException("block size " + blockSize + " is odd; " + codec.wireName()
                    + " splits every block into two halves, so the block size must be even");
        }
    }

    public CodecKind codec() {
        return codec;
    }

    public StripeLayout layout() {
        return layout;
    }

    public int fileCrc32c() {
        return fileCrc32c;
    }

    public String source() {
        return source;
    }

    /** The block of {@code unit} in {@code stripe}, or {@code null} if it lies past the end of the file. */
    public Block block(long stripe, int unit) {
        return blocks[slot(stripe, unit)];
    }

    /** Every block, stripe-major. */
    public List<Block> blocks() {
        List<Block> list = new ArrayList<>();
        for (Block b : blocks) {
            if (b != null) {
                list.add(b);
            }
        }
        return Collections.unmodifiableList(list);
    }

    private int slot(long stripe, int unit) {
        return (int) (stripe * layout.totalUnits() + unit);
    }

    /** The manifest as JSON text. */
    public byte[] toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("format", FORMAT);
        root.put("version", VERSION);
        root.put("codec", codec.wireName());
        root.put("k", layout.k());
        root.put("r", layout.r());
        root.put("blockSize", layout.blockSize());
        root.put("length", layout.length());
        root.put("stripes", layout.stripes());
        root.put("fileCrc32c", hex(fileCrc32c));
        root.put("source", source);
        ArrayNode arr = root.putArray("blocks");
        for (Block b : blocks()) {
            ObjectNode o = arr.addObject();
            o.put("file", b.file());
            o.put("stripe", b.stripe());
            o.put("index", b.unit());
            o.put("role", b.data() ? "data" : "parity");
            o.put("length", b.length());
            o.put("crc32c", b.crcHex());
        }
        try {
            return (JSON.writeValueAsString(root) + "\n").getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise manifest", e);
        }
    }

    /** Writes {@code dir/manifest.json} atomically and durably. */
    public void write(Path dir) throws IOException {
        FileSync.writeAtomically(dir.resolve(FILE_NAME), toJson());
    }

    /**
     * Reads and validates {@code dir/manifest.json}.
     *
     * @throws NoSuchFileException if the directory or its manifest is missing
     * @throws IllegalArgumentException naming the problem if the manifest is corrupt, of an unknown
     *     version, or names an unknown codec
     */
    public static Manifest read(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new NoSuchFileException(dir + " (no such directory)");
        }
        Path file = dir.resolve(FILE_NAME);
        if (!Files.exists(file)) {
            throw new NoSuchFileException(file + " (no manifest: is " + dir + " an 'hayloft ec encode' directory?)");
        }
        byte[] bytes = Files.readAllBytes(file);
        try {
            return parse(bytes);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    static Manifest parse(byte[] bytes) {
        JsonNode root;
        try {
            root = JSON.readTree(bytes);
        } catch (IOException e) {
            throw corrupt("not valid JSON (" + firstLine(e.getMessage()) + ")");
        }
        if (root == null || !root.isObject()) {
            throw corrupt("not a JSON object");
        }
        String format = text(root, "format");
        if (!FORMAT.equals(format)) {
            throw corrupt("format is '" + format + "', expected '" + FORMAT + "'");
        }
        long version = number(root, "version");
        if (version != VERSION) {
            throw new IllegalArgumentException("unsupported manifest version " + version
                    + "; this hayloft reads version " + VERSION);
        }
        CodecKind codec = CodecKind.fromWireName(text(root, "codec"));
        StripeLayout layout;
        try {
            layout = new StripeLayout(toInt(root, "k"), toInt(root, "r"), number(root, "blockSize"),
                    number(root, "length"));
        } catch (IllegalArgumentException e) {
            throw corrupt(e.getMessage());
        }
        long stripes = number(root, "stripes");
        if (stripes != layout.stripes()) {
            throw corrupt("stripes is " + stripes + " but length, k and blockSize give "
                    + layout.stripes());
        }
        int fileCrc = parseHex(text(root, "fileCrc32c"), "fileCrc32c");
        String source = root.hasNonNull("source") ? root.get("source").asText() : "";
        JsonNode arr = root.get("blocks");
        if (arr == null || !arr.isArray()) {
            throw corrupt("missing array 'blocks'");
        }
        List<Block> list = new ArrayList<>();
        for (JsonNode o : arr) {
            if (!o.isObject()) {
                throw corrupt("blocks holds a non-object: " + o);
            }
            String role = text(o, "role");
            if (!role.equals("data") && !role.equals("parity")) {
                throw corrupt("block role '" + role + "' is neither data nor parity");
            }
            list.add(new Block(text(o, "file"), number(o, "stripe"), toInt(o, "index"), role.equals("data"),
                    number(o, "length"), parseHex(text(o, "crc32c"), "crc32c of " + text(o, "file"))));
        }
        try {
            return new Manifest(codec, layout, fileCrc, source, list);
        } catch (IllegalArgumentException e) {
            throw corrupt(e.getMessage());
        }
    }

    private static IllegalArgumentException corrupt(String message) {
        return new IllegalArgumentException("corrupt manifest: " + message);
    }

    private static String text(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isTextual()) {
            throw corrupt("missing text field '" + field + "'");
        }
        return n.asText();
    }

    private static long number(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong()) {
            throw corrupt("missing integer field '" + field + "'");
        }
        return n.asLong();
    }

    private static int toInt(JsonNode o, String field) {
        long v = number(o, field);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw corrupt("field '" + field + "' out of range: " + v);
        }
        return (int) v;
    }

    private static int parseHex(String s, String what) {
        if (s.length() != 8 || !s.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            throw corrupt(what + " '" + s + "' is not 8 lowercase hex digits");
        }
        return Integer.parseUnsignedInt(s, 16);
    }

    static String hex(int crc) {
        return String.format(Locale.ROOT, "%08x", crc);
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "parse error";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
