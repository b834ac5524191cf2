package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.s3.Chunk;
import io.hayloft.s3.GatewayCluster;
import io.hayloft.s3.S3Config;
import io.hayloft.s3.S3Server;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.store.StoreConfig;
import java.io.InputStream;
import java.net.URI;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;

/**
 * One big object in one PutObject (the SDK streams it aws-chunked with a CRC32 trailer), made by a
 * generator and never held in memory, through a second gateway beside the suite's; read back through
 * the suite's as a stream and compared by a running SHA-256; and a range across the chunk edge in its
 * middle. The slow test of the SDK suite.
 *
 * <p>Its size, 72 MiB and 7 bytes, is chosen to cross what a big single PUT crosses: more than a
 * store's largest request body ({@code StoreConfig.maxBodyBytes}, 64 MiB) and than the gateway's
 * aggregated bodies ({@code S3Config.maxBodyBytes}, 16 MiB), so only the streamed, chunked path can
 * carry it; nine full chunks of the default chunk size (8 MiB), each named in the body's pending
 * record before its needle is written, more than the gateway client's lease slots (chunks take them
 * in turn, so they go to more than one volume), and a last chunk of 7 bytes. It was 1 GiB (128 full
 * chunks), which crossed no further boundary: not 2^31 bytes, nor a volume's 1 GiB limit (its chunks
 * spread over the writable volumes).
 */
@Tag("slow")
class BigObjectTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    /** The default chunk size, which the second gateway keeps. */
    private static final int CHUNK = new S3Config().chunkBytes;
    private static final long SIZE = 9L * CHUNK + 7;

    @Test
    void aBigObjectGoesInAndComesOutByteExact() throws Exception {
        assertThat(SIZE).as("bigger than a store's largest request body").isGreaterThan(new StoreConfig().maxBodyBytes)
                .as("bigger than the gateway's aggregated bodies").isGreaterThan(new S3Config().maxBodyBytes);
        String bucket = S3.bucket("big");
        long seed = 27;
        long start = System.nanoTime();
        // Up through a second gateway beside the suite's, with the default chunk size (8 MiB; the suite's
        // is 1 MiB); read back through the suite's gateway.
        PutObjectResponse put;
        try (S3Server second = S3Server.start(ConfigLoader.load(null, Map.of("directory", S3.cluster().directoryAddress(),
                "host", "127.0.0.1", "port", "0", "accessKey", GatewayCluster.ACCESS_KEY, "secretKey", GatewayCluster.SECRET_KEY,
                "region", GatewayCluster.REGION, "sweepIntervalMillis", "0"), S3Config.class).validate());
             S3Client s3 = SdkCluster.builder(URI.create("http://127.0.0.1:" + second.port()), GatewayCluster.ACCESS_KEY,
                     GatewayCluster.SECRET_KEY).build()) {
            put = s3.putObject(b -> b.bucket(bucket).key("big.bin").contentType("application/octet-stream"),
                    RequestBody.fromContentProvider(() -> new GeneratedStream(seed, SIZE), SIZE, "application/octet-stream"));
        }
        long putMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(put.eTag()).matches("\"[0-9a-f]{32}\"");
        // Stored as the default chunk size cuts it, nine full chunks and one of 7 bytes, on more than one volume.
        List<Chunk> chunks = S3.cluster().directory().directory().namespace().object(bucket, "big.bin").chunks();
        assertThat(chunks).extracting(Chunk::size).containsExactly(LongStream.range(0, 10)
                .map(i -> i < 9 ? CHUNK : 7).boxed().toArray(Long[]::new));
        assertThat(chunks.stream().map(Chunk::volume).distinct().count()).as("volumes of %s", chunks).isGreaterThan(1);

        start = System.nanoTime();
        MessageDigest got = MessageDigest.getInstance("SHA-256");
        long n = 0;
        try (ResponseInputStream<GetObjectResponse> in = S3.s3().getObject(b -> b.bucket(bucket).key("big.bin"))) {
            assertThat(in.response().contentLength()).isEqualTo(SIZE);
            assertThat(in.response().eTag()).isEqualTo(put.eTag());
            byte[] buf = new byte[1 << 16];
            for (int r = in.read(buf); r >= 0; r = in.read(buf)) {
                got.update(buf, 0, r);
                n += r;
            }
        }
        long getMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(n).isEqualTo(SIZE);
        assertThat(got.digest()).isEqualTo(new GeneratedStream(seed, SIZE).readAllAndDigest());
        System.out.printf("BigObjectTest: PUT %d bytes in %d ms (%.0f MB/s), GET in %d ms (%.0f MB/s)%n", SIZE, putMillis,
                SIZE / 1e3 / Math.max(1, putMillis), getMillis, SIZE / 1e3 / Math.max(1, getMillis));

        // 2 MiB across the chunk edge in the middle: the bytes the generator makes there.
        long edge = SIZE / 2 / CHUNK * CHUNK;
        long from = edge - (1 << 20) - 3;
        byte[] expected = new byte[2 << 20];
        try (InputStream g = new GeneratedStream(seed, SIZE)) {
            g.skipNBytes(from);
            g.readNBytes(expected, 0, expected.length);
        }
        byte[] range = S3.s3().getObjectAsBytes(b -> b.bucket(bucket).key("big.bin")
                .range("bytes=" + from + "-" + (from + expected.length - 1))).asByteArray();
        assertThat(range).isEqualTo(expected);
        S3.s3().deleteObject(b -> b.bucket(bucket).key("big.bin"));
    }
}
