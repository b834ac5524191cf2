package io.hayloft.raid;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import io.hayloft.erasure.CodecKind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The raid-node's hot-reloadable policy (docs/raid.md "Policy file"): which volumes to encode and
 * how, how hard to repair and scrub. Read from a JSON object whose keys are the field names below;
 * a missing key keeps its default, an unknown key or a bad value is refused with a
 * {@link PolicyException} naming the field, so {@link RaidServer} can keep the previous policy.
 *
 * <p>Mutable while being read, then treated as immutable (the server publishes a validated
 * instance through a volatile field and never changes it); not thread-safe while being filled.
 */
public final class RaidPolicy {

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);

    /** The only placement implemented: k + r distinct stores, distinct racks while racks remain. */
    public static final String PLACEMENT_RACKS = "racks";

    /** Codec of new stripes: rs, hh-xor, hh-xor+, hh-nonxor. */
    public String codec = CodecKind.HH_XOR_PLUS.wireName();
    public int k = 10;
    public int r = 4;
    /** Bytes per block of new stripes; a positive multiple of 8. */
    public long blockSize = 256L << 20;
    /** READ_ONLY volumes created at least this long ago are encoded. */
    public long minAgeMillis = 24L * 3600 * 1000;
    /** Stripe placement; only {@value #PLACEMENT_RACKS}. */
    public String placement = PLACEMENT_RACKS;
    /** Parallel encode jobs and repair workers. */
    public int workers = 4;
    /** Repair read budget per store in bytes/s; 0: unlimited. */
    public long repairBytesPerSecondPerStore = 0;
    /** Bytes per second the scrubber reads (all stores together); 0 turns scrubbing off. */
    public long scrubBytesPerSecond = 8L << 20;
    /** A block on a store that is not UP is rebuilt once the store has been seen down this long. */
    public long repairGraceMillis = 15L * 60 * 1000;
    /** Fraction of a coded volume's bytes lost to deletes above which it is reclaimed (passed to the reclaim hook). */
    public double reclaimThreshold = 0.3;
    /** Time between two policy passes. */
    public long policyIntervalMillis = 60_000;
    /** Whether passes encode the backlog (false: repair, scrub and reclaim only). */
    public boolean encode = true;

    /** Thrown when a policy file is unreadable or invalid; the message names the field. */
    public static final class PolicyException extends Exception {
        private static final long serialVersionUID = 1L;

        public PolicyException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Reads and validates a policy file.
     *
     * @throws PolicyException naming the file and the bad field or value
     */
    public static RaidPolicy read(Path file) throws PolicyException {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new PolicyException("policy file " + file + " unreadable: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new PolicyException("policy file " + file + " must hold a JSON object", null);
        }
        RaidPolicy p;
        try {
            p = JSON.treeToValue(root, RaidPolicy.class);
        } catch (UnrecognizedPropertyException e) {
            throw new PolicyException("policy file " + file + ": unknown field '" + e.getPropertyName() + "'", e);
        } catch (MismatchedInputException e) {
            String field = e.getPath().isEmpty() ? "?" : e.getPath().get(e.getPath().size() - 1).getFieldName();
            throw new PolicyException("policy file " + file + ": field '" + field + "' has a bad value: "
                    + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new PolicyException("policy file " + file + ": " + e.getMessage(), e);
        }
        try {
            return p.validate();
        } catch (IllegalArgumentException e) {
            throw new PolicyException("policy file " + file + ": " + e.getMessage(), e);
        }
    }

    /** @throws IllegalArgumentException naming the bad field and value */
    public RaidPolicy validate() {
        try {
            CodecKind.fromWireName(codec);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("field 'codec': " + e.getMessage(), e);
        }
        check(k >= 1 && r >= 1 && k + r <= 64, "k", "k and r must be >= 1 with k + r <= 64, were k=" + k + " r=" + r);
        check(r >= 1, "r", "must be >= 1, was " + r);
        check(blockSize > 0 && blockSize % 8 == 0, "blockSize", "must be a positive multiple of 8, was " + blockSize);
        check(minAgeMillis >= 0, "minAgeMillis", "must be >= 0, was " + minAgeMillis);
        check(PLACEMENT_RACKS.equals(placement), "placement", "must be \"" + PLACEMENT_RACKS + "\", was \"" + placement + "\"");
        check(workers >= 1 && workers <= 256, "workers", "must be in 1..256, was " + workers);
        check(repairBytesPerSecondPerStore >= 0, "repairBytesPerSecondPerStore", "must be >= 0, was " + repairBytesPerSecondPerStore);
        check(scrubBytesPerSecond >= 0, "scrubBytesPerSecond", "must be >= 0, was " + scrubBytesPerSecond);
        check(repairGraceMillis >= 0, "repairGraceMillis", "must be >= 0, was " + repairGraceMillis);
        check(reclaimThreshold > 0 && reclaimThreshold <= 1, "reclaimThreshold", "must be in (0, 1], was " + reclaimThreshold);
        check(policyIntervalMillis >= 10, "policyIntervalMillis", "must be >= 10, was " + policyIntervalMillis);
        return this;
    }

    private static void check(boolean ok, String field, String message) {
        if (!ok) {
            throw new IllegalArgumentException("field '" + field + "' " + message);
        }
    }

    /** A raid-node configuration for jobs under this policy: {@code base}'s connection settings, this policy's shape. */
    public RaidConfig apply(RaidConfig base) {
        RaidConfig c = new RaidConfig();
        c.directory = base.directory;
        c.adminToken = base.adminToken;
        c.transferBytes = base.transferBytes;
        c.indexReplicas = base.indexReplicas;
        c.requestTimeoutMillis = base.requestTimeoutMillis;
        c.spoolDir = base.spoolDir;
        c.encodeAt = base.encodeAt;
        c.tlsFrom(base);
        c.codec = codec;
        c.k = k;
        c.r = r;
        c.blockSize = blockSize;
        c.minAgeMillis = minAgeMillis;
        c.workers = workers;
        c.repairBytesPerSecondPerStore = repairBytesPerSecondPerStore;
        c.reclaimThreshold = reclaimThreshold;
        return c.validate();
    }

    /** The policy as a JSON-ready map, for {@code /status}. */
    public Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("codec", codec);
        m.put("k", k);
        m.put("r", r);
        m.put("blockSize", blockSize);
        m.put("minAgeMillis", minAgeMillis);
        m.put("placement", placement);
        m.put("workers", workers);
        m.put("repairBytesPerSecondPerStore", repairBytesPerSecondPerStore);
        m.put("scrubBytesPerSecond", scrubBytesPerSecond);
        m.put("repairGraceMillis", repairGraceMillis);
        m.put("reclaimThreshold", reclaimThreshold);
        m.put("policyIntervalMillis", policyIntervalMillis);
        m.put("encode", encode);
        return m;
    }
}
