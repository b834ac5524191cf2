package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.s3.GatewayCluster;
import io.hayloft.s3.S3Config;
import io.hayloft.s3.S3Server;
import io.hayloft.serverkit.config.ConfigLoader;
import java.io.InputStream;
import java.net.URI;
import java.util.Map;
import java.security.MessageDigest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;

/**
 * One object of 1 GiB in one PutObject (the SDK streams it aws-chunked with a CRC32 trailer), made by a
 * generator and never held in memory, through a second gateway beside the suite's; read back through
 * the suite's as a stream and compared by a running SHA-256; and a range across its middle. The slow test of the SDK suite: tagged {@code gib}.
 */
@Tag("gib")
@Tag("slow")
class OneGibObjectTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static final long GIB = 1L << 30;

    @Test
    void aGibibyteGoesInAndComesOutByteExact() throws Exception {
        String bucket = S3.bucket("gib");
        long seed = 27;
        long start = System.nanoTime();
        // Up through a second gateway beside the suite's, with the default chunk size (8 MiB: the suite's
        // 1 MiB would make 1,024 chunks); read back through the suite's gateway.
        PutObjectResponse put;
        try (S3Server second = S3Server.start(ConfigLoader.load(null, Map.of("directory", S3.cluster().directoryAddress(),
                "host", "127.0.0.1", "port", "0", "accessKey", GatewayCluster.ACCESS_KEY, "secretKey", GatewayCluster.SECRET_KEY,
                "region", GatewayCluster.REGION, "sweepIntervalMillis", "0"), S3Config.class).validate());
             S3Client s3 = SdkCluster.builder(URI.create("http://127.0.0.1:" + second.port()), GatewayCluster.ACCESS_KEY,
                     GatewayCluster.SECRET_KEY).build()) {
            put = s3.putObject(b -> b.bucket(bucket).key("one-gib.bin").contentType("application/octet-stream"),
                    RequestBody.fromContentProvider(() -> new GeneratedStream(seed, GIB), GIB, "application/octet-stream"));
        }
        long putMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(put.eTag()).matches("\"[0-9a-f]{32}\"");

        start = System.nanoTime();
        MessageDigest got = MessageDigest.getInstance("SHA-256");
        long n = 0;
        try (ResponseInputStream<GetObjectResponse> in = S3.s3().getObject(b -> b.bucket(bucket).key("one-gib.bin"))) {
            assertThat(in.response().contentLength()).isEqualTo(GIB);
            assertThat(in.response().eTag()).isEqualTo(put.eTag());
            byte[] buf = new byte[1 << 16];
            for (int r = in.read(buf); r >= 0; r = in.read(buf)) {
                got.update(buf, 0, r);
                n += r;
            }
        }
        long getMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(n).isEqualTo(GIB);
        assertThat(got.digest()).isEqualTo(new GeneratedStream(seed, GIB).readAllAndDigest());
        System.out.printf("OneGibObjectTest: PUT 1 GiB in %d ms (%.0f MB/s), GET in %d ms (%.0f MB/s)%n", putMillis,
                GIB / 1e3 / putMillis, getMillis, GIB / 1e3 / getMillis);

        // 2 MiB across the middle: the bytes the generator makes there.
        long from = GIB / 2 - (1 << 20) - 3;
        byte[] expected = new byte[2 << 20];
        try (InputStream g = new GeneratedStream(seed, GIB)) {
            g.skipNBytes(from);
            g.readNBytes(expected, 0, expected.length);
        }
        byte[] range = S3.s3().getObjectAsBytes(b -> b.bucket(bucket).key("one-gib.bin")
                .range("bytes=" + from + "-" + (from + expected.length - 1))).asByteArray();
        assertThat(range).isEqualTo(expected);
        S3.s3().deleteObject(b -> b.bucket(bucket).key("one-gib.bin"));
    }
}
