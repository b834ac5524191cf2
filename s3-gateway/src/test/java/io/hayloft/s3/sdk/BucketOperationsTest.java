package io.hayloft.s3.sdk;

import static io.hayloft.s3.sdk.S3Errors.expect;
import static io.hayloft.s3.sdk.S3Errors.expectStatus;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.s3.GatewayCluster;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.Bucket;
import software.amazon.awssdk.services.s3.model.GetBucketLocationResponse;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/** ListBuckets, CreateBucket, HeadBucket, DeleteBucket, GetBucketLocation and their errors, through the Java SDK v2. */
class BucketOperationsTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    @Test
    void aBucketIsCreatedListedHeadedLocatedAndDeleted() {
        S3Client s3 = S3.s3();
        String name = S3.bucket("life", false);
        s3.createBucket(b -> b.bucket(name));
        List<String> names = s3.listBuckets().buckets().stream().map(Bucket::name).toList();
        assertThat(names).contains(name);
        assertThat(names).as("ListBuckets in name order").isSorted();
        Bucket listed = s3.listBuckets().buckets().stream().filter(b -> b.name().equals(name)).findFirst().orElseThrow();
        assertThat(listed.creationDate()).isNotNull();
        s3.headBucket(b -> b.bucket(name));
        GetBucketLocationResponse location = s3.getBucketLocation(b -> b.bucket(name));
        // us-east-1 answers an empty LocationConstraint (S3's legacy): the SDK maps it to null or "".
        assertThat(location.locationConstraintAsString()).isIn(null, "", "us-east-1");
        s3.deleteBucket(b -> b.bucket(name));
        assertThat(s3.listBuckets().buckets().stream().map(Bucket::name)).doesNotContain(name);
        S3Exception e = expectStatus(() -> s3.headBucket(b -> b.bucket(name)), 404);
        assertThat(e).isInstanceOf(NoSuchBucketException.class);
    }

    @Test
    void aBucketNameIsNotTakenTwice() {
        String name = S3.bucket("twice");
        S3.s3().putObject(b -> b.bucket(name).key("k"), RequestBody.fromString("still here"));
        // AWS answers 200 to this in us-east-1 only, for legacy reasons; everywhere else, and in S3-compatible
        // stores, BucketAlreadyOwnedByYou. Either way the bucket and its objects stay.
        expect(() -> S3.s3().createBucket(b -> b.bucket(name)), "BucketAlreadyOwnedByYou", 409);
        assertThat(S3.s3().getObjectAsBytes(b -> b.bucket(name).key("k")).asUtf8String()).isEqualTo("still here");
    }

    @Test
    void aBucketWithObjectsIsNotDeleted() {
        S3Client s3 = S3.s3();
        String name = S3.bucket("full");
        s3.putObject(b -> b.bucket(name).key("a/b"), RequestBody.fromString("x"));
        expect(() -> s3.deleteBucket(b -> b.bucket(name)), "BucketNotEmpty", 409);
        s3.headBucket(b -> b.bucket(name));
        s3.deleteObject(b -> b.bucket(name).key("a/b"));
        s3.deleteBucket(b -> b.bucket(name));
    }

    @Test
    void aBucketThatIsNotThereIsNoSuchBucket() {
        S3Client s3 = S3.s3();
        String name = S3.bucket("absent", false);
        expect(() -> s3.deleteBucket(b -> b.bucket(name)), "NoSuchBucket", 404);
        expect(() -> s3.getBucketLocation(b -> b.bucket(name)), "NoSuchBucket", 404);
        expect(() -> s3.listObjectsV2(b -> b.bucket(name)), "NoSuchBucket", 404);
        expect(() -> s3.listObjects(b -> b.bucket(name)), "NoSuchBucket", 404);
        expect(() -> s3.putObject(b -> b.bucket(name).key("k"), RequestBody.fromString("x")), "NoSuchBucket", 404);
        expect(() -> s3.getObject(b -> b.bucket(name).key("k")), "NoSuchBucket", 404);
        expect(() -> s3.createMultipartUpload(b -> b.bucket(name).key("k")), "NoSuchBucket", 404);
        expect(() -> s3.listMultipartUploads(b -> b.bucket(name)), "NoSuchBucket", 404);
    }

    @Test
    void invalidBucketNamesAreRefused() throws Exception {
        // S3's rules: 3-63 characters of a-z 0-9 . -, beginning and ending with a letter or digit, no "..",
        // not an IP address. The SDK refuses these itself before sending a CreateBucket: sent signed here.
        RawS3 raw = new RawS3(S3.endpoint());
        for (String bad : List.of("ab", "a".repeat(64), "-starts-with-dash", "ends-with-dash-", "two..dots",
                "192.168.5.4", "Upper-Case", "under_score")) {
            RawS3.Answer a = raw.signed("PUT", "/" + bad, Map.of(), Map.of(), null, GatewayCluster.ACCESS_KEY,
                    GatewayCluster.SECRET_KEY, Clock.systemUTC());
            assertThat(a.status()).as("CreateBucket %s: %s", bad, a).isEqualTo(400);
            assertThat(a.code()).as("CreateBucket %s: %s", bad, a).isEqualTo("InvalidBucketName");
            assertThat(a.requestId()).as("CreateBucket %s: %s", bad, a).isNotBlank();
        }
        assertThat(S3.s3().listBuckets().buckets().stream().map(Bucket::name)).doesNotContain("ab", "two..dots");
        String ok = "a" + "b".repeat(61) + "c";
        S3.s3().createBucket(b -> b.bucket(ok));
        S3.s3().deleteBucket(b -> b.bucket(ok));
    }
}
