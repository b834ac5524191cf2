package io.hayloft.s3.checksum;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.s3.S3Error;
import io.hayloft.s3.S3Exception;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.checksums.DefaultChecksumAlgorithm;
import software.amazon.awssdk.checksums.SdkChecksum;

class ChecksumsTest {
    private static final byte[] CHECK = "123456789".getBytes(StandardCharsets.US_ASCII);

    private static long value(ChecksumAlgorithm alg, byte[] data) {
        RunningChecksum c = alg.start();
        c.update(data, 0, data.length);
        return Checksums.crcValue(c.digest());
    }

    @Test
    void knownVectors() {
        assertThat(value(ChecksumAlgorithm.CRC32, CHECK)).isEqualTo(0xCBF43926L);
        assertThat(value(ChecksumAlgorithm.CRC32C, CHECK)).isEqualTo(0xE3069283L);
        assertThat(value(ChecksumAlgorithm.CRC64NVME, CHECK)).isEqualTo(0xAE8B14860A799888L);
        assertThat(value(ChecksumAlgorithm.CRC64NVME, new byte[0])).isZero();
        RunningChecksum sha1 = ChecksumAlgorithm.SHA1.start();
        sha1.update(ByteBuffer.wrap("abc".getBytes(StandardCharsets.US_ASCII)));
        assertThat(Checksums.hex(sha1.digest())).isEqualTo("a9993e364706816aba3e25717850c26c9cd0d89d");
        RunningChecksum sha256 = ChecksumAlgorithm.SHA256.start();
        sha256.update("abc".getBytes(StandardCharsets.US_ASCII), 0, 3);
        assertThat(Checksums.hex(sha256.digest()))
                .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        // S3 writes CRCs big-endian, base64: the CRC32 of "" is AAAAAA==, of "123456789" y/Q5Jg==
        RunningChecksum crc = ChecksumAlgorithm.CRC32.start();
        crc.update(CHECK, 0, CHECK.length);
        assertThat(Checksums.base64(crc.digest())).isEqualTo("y/Q5Jg==");
        for (ChecksumAlgorithm a : ChecksumAlgorithm.values()) {
            assertThat(a.start().digest()).hasSize(a.digestBytes());
            assertThat(ChecksumAlgorithm.parse(a.name().toLowerCase())).isEqualTo(a);
            assertThat(ChecksumAlgorithm.ofHeader(a.header().toUpperCase())).isEqualTo(a);
        }
        assertThat(ChecksumAlgorithm.parse("md5")).isNull();
    }

    @Test
    void crc64nvmeSlicedEqualsBytewiseOverEveryLengthAndAlignment() {
        byte[] data = new byte[300];
        new Random(7).nextBytes(data);
        for (int off = 0; off < 9; off++) {
            for (int len = 0; off + len <= data.length; len += 1 + len / 7) {
                Crc64Nvme sliced = new Crc64Nvme();
                sliced.update(data, off, len);
                Crc64Nvme bytewise = new Crc64Nvme();
                for (int i = off; i < off + len; i++) {
                    bytewise.update(data[i]);
                }
                assertThat(sliced.getValue()).as("off %d len %d", off, len).isEqualTo(bytewise.getValue());
                Crc64Nvme direct = new Crc64Nvme();
                ByteBuffer bb = ByteBuffer.allocateDirect(len);
                bb.put(data, off, len).flip();
                direct.update(bb);
                assertThat(direct.getValue()).isEqualTo(sliced.getValue());
            }
        }
    }

    /** The SDK computes CRC64NVME only with the CRT (aws-crt, native): without it this comparison is skipped. */
    @Test
    void crc64nvmeEqualsTheSdksWhenTheCrtIsThere() {
        SdkChecksum probe;
        try {
            probe = SdkChecksum.forAlgorithm(DefaultChecksumAlgorithm.CRC64NVME);
        } catch (RuntimeException e) {
            Assumptions.abort("the AWS SDK needs software.amazon.awssdk.crt:aws-crt for CRC64NVME: " + e.getMessage());
            return;
        }
        Random r = new Random(3);
        for (int t = 0; t < 300; t++) {
            byte[] data = new byte[r.nextInt(2000)];
            r.nextBytes(data);
            SdkChecksum sdk = t == 0 ? probe : SdkChecksum.forAlgorithm(DefaultChecksumAlgorithm.CRC64NVME);
            sdk.update(data, 0, data.length);
            RunningChecksum ours = ChecksumAlgorithm.CRC64NVME.start();
            ours.update(data, 0, data.length);
            assertThat(ours.digest()).isEqualTo(sdk.getChecksumBytes());
        }
    }

    @Property(tries = 300)
    void everyAlgorithmEqualsTheSdks(@ForAll @Size(max = 500) byte[] data) {
        var pairs = List.of(
                new Object[] {ChecksumAlgorithm.CRC32, DefaultChecksumAlgorithm.CRC32},
                new Object[] {ChecksumAlgorithm.CRC32C, DefaultChecksumAlgorithm.CRC32C},
                new Object[] {ChecksumAlgorithm.SHA1, DefaultChecksumAlgorithm.SHA1},
                new Object[] {ChecksumAlgorithm.SHA256, DefaultChecksumAlgorithm.SHA256});
        for (Object[] p : pairs) {
            SdkChecksum sdk = SdkChecksum.forAlgorithm((software.amazon.awssdk.checksums.spi.ChecksumAlgorithm) p[1]);
            sdk.update(data, 0, data.length);
            RunningChecksum ours = ((ChecksumAlgorithm) p[0]).start();
            ours.update(data, 0, data.length);
            assertThat(ours.digest()).as(p[0].toString()).isEqualTo(sdk.getChecksumBytes());
        }
    }

    @Property(tries = 500)
    void combineOfTwoPartsIsTheCrcOfBoth(@ForAll @Size(max = 3000) byte[] a, @ForAll @Size(max = 3000) byte[] b) {
        byte[] ab = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, ab, a.length, b.length);
        for (ChecksumAlgorithm alg : List.of(ChecksumAlgorithm.CRC32, ChecksumAlgorithm.CRC32C, ChecksumAlgorithm.CRC64NVME)) {
            long combined = Checksums.combine(alg, value(alg, a), value(alg, b), b.length);
            assertThat(combined).as(alg.name()).isEqualTo(value(alg, ab));
        }
    }

    @Test
    void combineOverManyPartsAndLongZeroRuns() {
        // parts of very different sizes, including 0 and 1 bytes and a 5 MiB run (exercises large lengths)
        Random r = new Random(11);
        int[] sizes = {0, 1, 5 << 20, 3, 0, 65536, 7};
        for (ChecksumAlgorithm alg : List.of(ChecksumAlgorithm.CRC32, ChecksumAlgorithm.CRC32C, ChecksumAlgorithm.CRC64NVME)) {
            RunningChecksum whole = alg.start();
            byte[] acc = null;
            for (int s : sizes) {
                byte[] part = new byte[s];
                r.nextBytes(part);
                whole.update(part, 0, s);
                RunningChecksum p = alg.start();
                p.update(part, 0, s);
                byte[] d = p.digest();
                acc = acc == null ? d : Checksums.combine(alg, acc, d, s);
            }
            assertThat(acc).as(alg.name()).isEqualTo(whole.digest());
        }
        // the JDK's CRC32 agrees with the combined value of a 2^32+ byte object's lengths (only the length matters)
        long c1 = Checksums.combine(ChecksumAlgorithm.CRC32, 0x12345678L, 0, 1L << 33);
        assertThat(c1).isBetween(0L, 0xFFFFFFFFL);
        assertThatThrownBy(() -> Checksums.combine(ChecksumAlgorithm.SHA1, 0, 0, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void jdkCrcsAgreeWithCombineAgainstJdk() {
        byte[] a = "hello ".getBytes(StandardCharsets.US_ASCII);
        byte[] b = "world".getBytes(StandardCharsets.US_ASCII);
        CRC32 ca = new CRC32();
        ca.update(a);
        CRC32 cb = new CRC32();
        cb.update(b);
        CRC32 cab = new CRC32();
        cab.update("hello world".getBytes(StandardCharsets.US_ASCII));
        assertThat(Checksums.combine(ChecksumAlgorithm.CRC32, ca.getValue(), cb.getValue(), b.length)).isEqualTo(cab.getValue());
        CRC32C xa = new CRC32C();
        xa.update(a);
        CRC32C xb = new CRC32C();
        xb.update(b);
        CRC32C xab = new CRC32C();
        xab.update("hello world".getBytes(StandardCharsets.US_ASCII));
        assertThat(Checksums.combine(ChecksumAlgorithm.CRC32C, xa.getValue(), xb.getValue(), b.length)).isEqualTo(xab.getValue());
    }

    @Test
    void compositeIsTheDigestOfThePartDigests() throws Exception {
        byte[] p1 = sha256("part one");
        byte[] p2 = sha256("part two");
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        md.update(p1);
        md.update(p2);
        assertThat(Checksums.composite(ChecksumAlgorithm.SHA256, List.of(p1, p2)))
                .isEqualTo(Base64.getEncoder().encodeToString(md.digest()) + "-2");
        byte[] c1 = Checksums.crcBytes(0xCBF43926L, 4);
        CRC32 crc = new CRC32();
        crc.update(c1);
        assertThat(Checksums.composite(ChecksumAlgorithm.CRC32, List.of(c1)))
                .isEqualTo(Base64.getEncoder().encodeToString(Checksums.crcBytes(crc.getValue(), 4)) + "-1");
    }

    @Test
    void md5EtagsAndContentMd5() throws Exception {
        byte[] body = "Welcome to Amazon S3.".getBytes(StandardCharsets.US_ASCII);
        byte[] md5 = Checksums.md5().digest(body);
        assertThat(Checksums.etag(Checksums.md5().digest(new byte[0]))).isEqualTo("d41d8cd98f00b204e9800998ecf8427e");
        Checksums.checkContentMd5(Base64.getEncoder().encodeToString(md5), md5);
        byte[] other = md5.clone();
        other[0] ^= 1;
        assertThatThrownBy(() -> Checksums.checkContentMd5(Base64.getEncoder().encodeToString(other), md5))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.error()).isEqualTo(S3Error.BAD_DIGEST));
        for (String bad : new String[] {"", "not base64!", "AAAA", Base64.getEncoder().encodeToString(new byte[17])}) {
            assertThatThrownBy(() -> Checksums.contentMd5(bad))
                    .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.error()).isEqualTo(S3Error.INVALID_DIGEST));
        }
        MessageDigest md = MessageDigest.getInstance("MD5");
        md.update(md5);
        md.update(md5);
        assertThat(Checksums.multipartEtag(List.of(md5, md5))).isEqualTo(Checksums.hex(md.digest()) + "-2");
    }

    @Test
    void headerValuesAreValidatedForTheirAlgorithm() {
        assertThat(Checksums.decode(ChecksumAlgorithm.CRC32, "y/Q5Jg==")).containsExactly(0xCB, 0xF4, 0x39, 0x26);
        assertThat(Checksums.decode(ChecksumAlgorithm.CRC64NVME, Base64.getEncoder().encodeToString(new byte[8]))).hasSize(8);
        for (ChecksumAlgorithm a : ChecksumAlgorithm.values()) {
            for (String bad : new String[] {null, "", "%%%", Base64.getEncoder().encodeToString(new byte[a.digestBytes() + 1]),
                    Base64.getEncoder().encodeToString(new byte[a.digestBytes() - 1])}) {
                assertThatThrownBy(() -> Checksums.decode(a, bad)).isInstanceOfSatisfying(S3Exception.class,
                        e -> assertThat(e.error()).isEqualTo(S3Error.INVALID_REQUEST));
            }
        }
        byte[] d = Checksums.crcBytes(0xCBF43926L, 4);
        Checksums.check(ChecksumAlgorithm.CRC32, "y/Q5Jg==", d);
        assertThatThrownBy(() -> Checksums.check(ChecksumAlgorithm.CRC32, "y/Q5Jw==", d))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.error()).isEqualTo(S3Error.BAD_DIGEST));
    }

    private static byte[] sha256(String s) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    }
}
