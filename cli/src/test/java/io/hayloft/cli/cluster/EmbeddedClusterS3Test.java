package io.hayloft.cli.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.net.URI;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The S3 gateway beside an {@link EmbeddedCluster} ({@link ClusterOptions#withS3(int)}): its address
 * and user, a crash and a start again on the same port with the objects kept, the sweep, and a
 * wrong secret refused.
 */
class EmbeddedClusterS3Test {
    @TempDir
    Path dir;

    private static S3Client s3(EmbeddedCluster c, String access, String secret) {
        return S3Client.builder().endpointOverride(URI.create("http://" + c.s3Address())).region(Region.US_EAST_1)
                .forcePathStyle(true).credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(access, secret)))
                .build();
    }

    @Test
    void theGatewayRunsBesideTheClusterAndComesBackOnItsPortAfterACrash() throws Exception {
        assertThat(catchThrowable(() -> ClusterOptions.of(dir).withS3(70000))).isInstanceOf(IllegalArgumentException.class);
        assertThat(catchThrowable(() -> ClusterOptions.of(dir).withS3Credentials("", "x"))).isInstanceOf(IllegalArgumentException.class);
        ClusterOptions o = ClusterOptions.of(dir).withFsync(false).withS3(0).withS3Credentials("tester", "tester-secret-key");
        try (EmbeddedCluster c = EmbeddedCluster.start(o)) {
            assertThat(c.s3()).isNotNull();
            String address = c.s3Address();
            assertThat(address).isEqualTo("127.0.0.1:" + c.s3().port());
            try (S3Client s3 = s3(c, "tester", "tester-secret-key")) {
                s3.createBucket(b -> b.bucket("kept"));
                s3.putObject(b -> b.bucket("kept").key("k"), RequestBody.fromString("across a crash"));
            }
            c.crashS3();
            assertThat(c.s3()).isNull();
            assertThat(catchThrowable(c::sweepS3)).isInstanceOf(IllegalStateException.class);
            c.startS3();
            assertThat(c.s3Address()).as("the same port again").isEqualTo(address);
            assertThat(catchThrowable(c::startS3)).isInstanceOf(IllegalStateException.class);
            try (S3Client s3 = s3(c, "tester", "tester-secret-key")) {
                assertThat(s3.getObjectAsBytes(b -> b.bucket("kept").key("k")).asUtf8String()).isEqualTo("across a crash");
            }
            try (S3Client wrong = s3(c, "tester", "not-the-secret")) {
                assertThat(catchThrowable(() -> wrong.listBuckets())).isInstanceOf(S3Exception.class);
            }
            assertThat(c.sweepS3()).as("nothing to sweep").isZero();
        }
        try (EmbeddedCluster c = EmbeddedCluster.start(ClusterOptions.of(dir).withFsync(false))) {
            assertThat(c.s3()).as("no gateway unless asked").isNull();
            assertThat(catchThrowable(c::s3Address)).isInstanceOf(IllegalStateException.class);
        }
    }
}
