package io.hayloft.format.wire;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the blocks of an erasure-coded volume live. Shared by the directory (which stores it) and the raid-node and client (which read it). Stored as JSON in the {@code stripes} column
 * family, keyed by the 4-byte big-endian logical volume id (docs/formats.md); unknown fields are
 * ignored on read.
 *
 * <p>The raid-node records the map twice: first as a {@code PLANNED} intent (every block name it
 * may write, before it writes any), in the same batch that moves the volume to {@code ENCODING};
 * then as {@code COMMITTED}, with every block's length and CRC32C verified on its store, in the
 * same batch that moves the volume to {@code ERASURE_CODED}. A restarted raid-node deletes the
 * blocks of a {@code PLANNED} map and rolls the volume back to {@code READ_ONLY}.
 *
 * @param volume       logical volume id
 * @param job          the encode job's id; part of every block name, so blocks of two jobs never collide
 * @param codec        codec wire name ({@code rs}, {@code hh-xor}, {@code hh-xor+}, {@code hh-nonxor})
 * @param k            data blocks per stripe
 * @param r            parity blocks per stripe
 * @param blockSize    bytes per block; the volume is cut at multiples of it, the last stripe zero-padded
 * @param volumeBytes  bytes of the sealed volume file that was encoded
 * @param status       {@code PLANNED} or {@code COMMITTED}
 * @param stripes      stripes in volume order, each with its {@code k + r} blocks in unit order
 * @param index        the needle-index block, replicated on several stores (same name on each)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record StripeMap(int volume, String job, String codec, int k, int r, long blockSize, long volumeBytes,
                        String status, List<Stripe> stripes, IndexBlock index) {

    public static final String PLANNED = "PLANNED";
    public static final String COMMITTED = "COMMITTED";

    public StripeMap {
        stripes = stripes == null ? List.of() : List.copyOf(stripes);
    }

    /** One block of a stripe: the store holding it, its name there, its length and CRC32C (0 while planned). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Block(String store, String name, long length, long crc32c) {
    }

    /** The {@code k + r} blocks of stripe {@code index}, data units first. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Stripe(int index, List<Block> blocks) {
        public Stripe {
            blocks = blocks == null ? List.of() : List.copyOf(blocks);
        }
    }

    /** The needle index of the volume, stored whole as block {@code name} on every store of {@code holders}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record IndexBlock(String name, List<String> holders, long length, long crc32c) {
        public IndexBlock {
            holders = holders == null ? List.of() : List.copyOf(holders);
        }
    }

    public StripeMap withStatus(String s) {
        return new StripeMap(volume, job, codec, k, r, blockSize, volumeBytes, s, stripes, index);
    }

    /** This map with block {@code unit} of stripe {@code stripe} replaced. */
    public StripeMap withBlock(int stripe, int unit, Block b) {
        List<Stripe> out = new ArrayList<>(stripes);
        List<Block> blocks = new ArrayList<>(stripes.get(stripe).blocks());
        blocks.set(unit, b);
        out.set(stripe, new Stripe(stripe, blocks));
        return new StripeMap(volume, job, codec, k, r, blockSize, volumeBytes, status, out, index);
    }

    /** Every block name the map mentions, with its store: what a rollback must delete. */
    public List<Block> allBlocks() {
        List<Block> all = new ArrayList<>();
        for (Stripe s : stripes) {
            all.addAll(s.blocks());
        }
        if (index != null) {
            for (String h : index.holders()) {
                all.add(new Block(h, index.name(), index.length(), index.crc32c()));
            }
        }
        return all;
    }
}
