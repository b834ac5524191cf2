package io.hayloft.s3.sdk;

import io.hayloft.s3.GatewayCluster;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.DefaultRetryStrategy;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * The AWS SDK for Java v2 suite's cluster: one {@link GatewayCluster} (a real directory, three stores,
 * the gateway with {@code chunkBytes} 1 MiB so that chunk edges are cheap to reach) shared by every
 * class of this package that registers this extension, started by the first and closed when the test
 * run ends; and the SDK clients to reach it, built the way an application builds them: default
 * integrity protections (CRC32 on every upload, sent aws-chunked with a trailer), path-style, the
 * gateway as endpoint. Each test class works in buckets of its own ({@link #bucket}).
 * Thread-safe once {@link #beforeAll} ran (the clients are).
 */
public final class SdkCluster implements BeforeAllCallback {
    /** Chunk size the gateway is started with: objects of a few MiB cross several chunks. */
    public static final int CHUNK = 1 << 20;
    /** S3's smallest part but the last. */
    public static final int PART = 5 << 20;

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SdkCluster.class);
    private static final AtomicInteger BUCKETS = new AtomicInteger();

    private Shared shared;

    @Override
    public void beforeAll(ExtensionContext context) {
        shared = context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(Shared.class, k -> Shared.start(), Shared.class);
    }

    /** The gateway's endpoint, {@code http://127.0.0.1:PORT}. */
    public URI endpoint() {
        return URI.create(shared.cluster.endpoint());
    }

    public GatewayCluster cluster() {
        return shared.cluster;
    }

    /** A client with the SDK's defaults (the one most tests use). */
    public S3Client s3() {
        return shared.s3;
    }

    /** An async client (Netty) with the SDK's own (CRT-free) multipart uploads and downloads on. */
    public S3AsyncClient async() {
        return shared.async;
    }

    public S3Presigner presigner() {
        return shared.presigner;
    }

    /** A new client with the SDK's defaults signing with {@code accessKey}/{@code secretKey}, retries off. Close it. */
    public S3Client client(String accessKey, String secretKey) {
        return builder(endpoint(), accessKey, secretKey)
                .overrideConfiguration(o -> o.apiCallTimeout(Duration.ofMinutes(1)).retryStrategy(DefaultRetryStrategy.doNotRetry()))
                .build();
    }

    /** A fresh bucket name, unique in this run, starting with {@code prefix}; created when {@code create}. */
    public String bucket(String prefix, boolean create) {
        String name = (prefix + "-" + BUCKETS.incrementAndGet() + "-" + Long.toHexString(System.nanoTime() & 0xffffff))
                .toLowerCase(Locale.ROOT);
        if (create) {
            s3().createBucket(b -> b.bucket(name));
        }
        return name;
    }

    /** A created bucket named after {@code prefix}. */
    public String bucket(String prefix) {
        return bucket(prefix, true);
    }

    static software.amazon.awssdk.services.s3.S3ClientBuilder builder(URI endpoint, String accessKey, String secretKey) {
        return S3Client.builder()
                .endpointOverride(endpoint)
                .forcePathStyle(true)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .overrideConfiguration(o -> o.apiCallTimeout(Duration.ofMinutes(5)));
    }

    /** The cluster and clients of the run; closed by JUnit at the end of it. */
    private static final class Shared implements ExtensionContext.Store.CloseableResource {
        final Path dir;
        final GatewayCluster cluster;
        final S3Client s3;
        final S3AsyncClient async;
        final S3Presigner presigner;

        private Shared(Path dir, GatewayCluster cluster) {
            this.dir = dir;
            this.cluster = cluster;
            URI endpoint = URI.create(cluster.endpoint());
            StaticCredentialsProvider credentials = StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(GatewayCluster.ACCESS_KEY, GatewayCluster.SECRET_KEY));
            this.s3 = builder(endpoint, GatewayCluster.ACCESS_KEY, GatewayCluster.SECRET_KEY).build();
            this.async = S3AsyncClient.builder()
                    .endpointOverride(endpoint)
                    .forcePathStyle(true)
                    .region(Region.US_EAST_1)
                    .credentialsProvider(credentials)
                    .multipartEnabled(true)
                    .multipartConfiguration(m -> m.minimumPartSizeInBytes((long) PART).thresholdInBytes((long) PART))
                    .build();
            this.presigner = S3Presigner.builder()
                    .endpointOverride(endpoint)
                    .region(Region.US_EAST_1)
                    .credentialsProvider(credentials)
                    .serviceConfiguration(S3Configuration.builder().pathStyleAccessEnabled(true).build())
                    .build();
        }

        static Shared start() {
            try {
                Path dir = Files.createTempDirectory("hayloft-sdk-");
                return new Shared(dir, GatewayCluster.start(dir, Map.of("chunkBytes", Integer.toString(CHUNK))));
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("the SDK suite's cluster did not start", e);
            }
        }

        @Override
        public void close() throws IOException {
            try {
                s3.close();
                async.close();
                presigner.close();
                cluster.close();
            } finally {
                try (Stream<Path> files = Files.walk(dir)) {
                    files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }
}
