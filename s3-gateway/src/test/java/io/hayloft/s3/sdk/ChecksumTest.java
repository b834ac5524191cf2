package io.hayloft.s3.sdk;

import static io.hayloft.s3.sdk.S3Errors.expect;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.ChecksumType;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * Integrity as the SDKs expect it: each of S3's five checksums on PUT (sent by the SDK as an
 * aws-chunked trailer, CRC64NVME as a header: the SDK computes that one only with the AWS CRT),
 * stored and answered on GET and HEAD with {@code x-amz-checksum-mode: ENABLED}, the SDK validating
 * the body against it; multipart CRC32 (composite {@code -N}) and CRC64NVME (full object); a wrong
 * checksum or Content-MD5 refused with BadDigest, an unreadable one with InvalidDigest.
 */
class ChecksumTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static String bucket;

    @BeforeAll
    static void bucket() {
        bucket = S3.bucket("checksums");
    }

    private static S3Client s3() {
        return S3.s3();
    }

    private static String answered(String algorithm, GetObjectResponse r) {
        return switch (algorithm) {
            case "CRC32" -> r.checksumCRC32();
            case "CRC32C" -> r.checksumCRC32C();
            case "CRC64NVME" -> r.checksumCRC64NVME();
            case "SHA1" -> r.checksumSHA1();
            case "SHA256" -> r.checksumSHA256();
            default -> throw new IllegalArgumentException(algorithm);
        };
    }

    private static String answered(String algorithm, HeadObjectResponse r) {
        return switch (algorithm) {
            case "CRC32" -> r.checksumCRC32();
            case "CRC32C" -> r.checksumCRC32C();
            case "CRC64NVME" -> r.checksumCRC64NVME();
            case "SHA1" -> r.checksumSHA1();
            case "SHA256" -> r.checksumSHA256();
            default -> throw new IllegalArgumentException(algorithm);
        };
    }

    private static String answered(String algorithm, PutObjectResponse r) {
        return switch (algorithm) {
            case "CRC32" -> r.checksumCRC32();
            case "CRC32C" -> r.checksumCRC32C();
            case "CRC64NVME" -> r.checksumCRC64NVME();
            case "SHA1" -> r.checksumSHA1();
            case "SHA256" -> r.checksumSHA256();
            default -> throw new IllegalArgumentException(algorithm);
        };
    }

    @ParameterizedTest
    @EnumSource(value = ChecksumAlgorithm.class, names = {"CRC32", "CRC32_C", "CRC64_NVME", "SHA1", "SHA256"})
    void eachChecksumIsVerifiedStoredAndAnswered(ChecksumAlgorithm algorithm) {
        String name = algorithm.toString();
        byte[] data = Digests.bytes(name.hashCode(), 2 * SdkCluster.CHUNK + 333);
        String key = "put/" + name;
        String expected = Digests.checksum(name, data);
        PutObjectResponse put = algorithm == ChecksumAlgorithm.CRC64_NVME
                ? s3().putObject(b -> b.bucket(bucket).key(key).checksumCRC64NVME(expected), RequestBody.fromBytes(data))
                : s3().putObject(b -> b.bucket(bucket).key(key).checksumAlgorithm(algorithm), RequestBody.fromBytes(data));
        assertThat(answered(name, put)).isEqualTo(expected);
        assertThat(put.eTag()).isEqualTo(Digests.etag(data));

        HeadObjectResponse head = s3().headObject(b -> b.bucket(bucket).key(key).checksumMode(ChecksumMode.ENABLED));
        assertThat(answered(name, head)).isEqualTo(expected);
        assertThat(head.checksumType()).isEqualTo(ChecksumType.FULL_OBJECT);
        if (algorithm != ChecksumAlgorithm.CRC64_NVME) {
            // The SDK checks the body against the answered checksum (it needs the CRT for CRC64NVME).
            ResponseBytes<GetObjectResponse> got = s3().getObjectAsBytes(b -> b.bucket(bucket).key(key)
                    .checksumMode(ChecksumMode.ENABLED));
            assertThat(got.asByteArray()).isEqualTo(data);
            assertThat(answered(name, got.response())).isEqualTo(expected);
        }
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray()).isEqualTo(data);
        // Without checksum mode no checksum is answered (S3 sends them only when asked).
        assertThat(answered(name, s3().headObject(b -> b.bucket(bucket).key(key)))).isNull();
    }

    @Test
    void aWrongChecksumOrContentMd5IsBadDigestAndChangesNothing() {
        byte[] data = Digests.bytes(80, 70_000);
        byte[] other = Digests.bytes(81, 70_000);
        s3().putObject(b -> b.bucket(bucket).key("bad"), RequestBody.fromBytes(data));
        expect(() -> s3().putObject(b -> b.bucket(bucket).key("bad").checksumCRC32(Digests.crc32(data)),
                RequestBody.fromBytes(other)), "BadDigest", 400);
        expect(() -> s3().putObject(b -> b.bucket(bucket).key("bad").checksumSHA256(Digests.sha256(data)),
                RequestBody.fromBytes(other)), "BadDigest", 400);
        expect(() -> s3().putObject(b -> b.bucket(bucket).key("bad").contentMD5(Digests.md5Base64(data)),
                RequestBody.fromBytes(other)), "BadDigest", 400);
        expect(() -> s3().putObject(b -> b.bucket(bucket).key("new-bad").contentMD5(Digests.md5Base64(data)),
                RequestBody.fromBytes(other)), "BadDigest", 400);
        expect(() -> s3().putObject(b -> b.bucket(bucket).key("bad").contentMD5("not-an-md5"),
                RequestBody.fromBytes(other)), "InvalidDigest", 400);
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("bad")).asByteArray()).isEqualTo(data);
        expect(() -> s3().getObject(b -> b.bucket(bucket).key("new-bad")), "NoSuchKey", 404);
        // A right Content-MD5 is taken.
        s3().putObject(b -> b.bucket(bucket).key("bad").contentMD5(Digests.md5Base64(other)), RequestBody.fromBytes(other));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("bad")).asByteArray()).isEqualTo(other);
    }

    @Test
    void multipartCrc32IsComposite() {
        List<byte[]> data = List.of(Digests.bytes(90, SdkCluster.PART), Digests.bytes(91, SdkCluster.PART), Digests.bytes(92, 4321));
        String id = s3().createMultipartUpload(b -> b.bucket(bucket).key("mp/crc32").checksumAlgorithm(ChecksumAlgorithm.CRC32))
                .uploadId();
        List<CompletedPart> parts = new ArrayList<>();
        for (int i = 0; i < data.size(); i++) {
            int n = i + 1;
            UploadPartResponse r = s3().uploadPart(b -> b.bucket(bucket).key("mp/crc32").uploadId(id).partNumber(n)
                    .checksumAlgorithm(ChecksumAlgorithm.CRC32), RequestBody.fromBytes(data.get(n - 1)));
            assertThat(r.checksumCRC32()).isEqualTo(Digests.crc32(data.get(n - 1)));
            parts.add(CompletedPart.builder().partNumber(n).eTag(r.eTag()).checksumCRC32(r.checksumCRC32()).build());
        }
        CompleteMultipartUploadResponse done = s3().completeMultipartUpload(b -> b.bucket(bucket).key("mp/crc32").uploadId(id)
                .multipartUpload(m -> m.parts(parts)));
        String composite = Digests.composite("CRC32", data);
        assertThat(done.checksumCRC32()).isEqualTo(composite);
        assertThat(done.eTag()).isEqualTo(Digests.multipartEtag(data));
        HeadObjectResponse head = s3().headObject(b -> b.bucket(bucket).key("mp/crc32").checksumMode(ChecksumMode.ENABLED));
        assertThat(head.checksumCRC32()).isEqualTo(composite);
        assertThat(head.checksumType()).isEqualTo(ChecksumType.COMPOSITE);
        ResponseBytes<GetObjectResponse> got = s3().getObjectAsBytes(b -> b.bucket(bucket).key("mp/crc32")
                .checksumMode(ChecksumMode.ENABLED));
        assertThat(got.asByteArray()).isEqualTo(Digests.concat(data));
        assertThat(got.response().checksumCRC32()).isEqualTo(composite);
    }

    @Test
    void multipartCrc64nvmeIsFullObject() {
        List<byte[]> data = List.of(Digests.bytes(95, SdkCluster.PART + 1), Digests.bytes(96, 3 * SdkCluster.CHUNK));
        byte[] all = Digests.concat(data);
        String id = s3().createMultipartUpload(b -> b.bucket(bucket).key("mp/crc64").checksumAlgorithm(ChecksumAlgorithm.CRC64_NVME)
                .checksumType(ChecksumType.FULL_OBJECT)).uploadId();
        List<CompletedPart> parts = new ArrayList<>();
        for (int i = 0; i < data.size(); i++) {
            int n = i + 1;
            String crc = Digests.crc64nvme(data.get(i));
            UploadPartResponse r = s3().uploadPart(b -> b.bucket(bucket).key("mp/crc64").uploadId(id).partNumber(n)
                    .checksumCRC64NVME(crc), RequestBody.fromBytes(data.get(n - 1)));
            assertThat(r.checksumCRC64NVME()).isEqualTo(crc);
            parts.add(CompletedPart.builder().partNumber(n).eTag(r.eTag()).checksumCRC64NVME(crc).build());
        }
        String full = Digests.crc64nvme(all);
        CompleteMultipartUploadResponse done = s3().completeMultipartUpload(b -> b.bucket(bucket).key("mp/crc64").uploadId(id)
                .checksumCRC64NVME(full).checksumType(ChecksumType.FULL_OBJECT).multipartUpload(m -> m.parts(parts)));
        assertThat(done.checksumCRC64NVME()).isEqualTo(full);
        assertThat(done.checksumType()).isEqualTo(ChecksumType.FULL_OBJECT);
        HeadObjectResponse head = s3().headObject(b -> b.bucket(bucket).key("mp/crc64").checksumMode(ChecksumMode.ENABLED));
        assertThat(head.checksumCRC64NVME()).isEqualTo(full);
        assertThat(head.checksumType()).isEqualTo(ChecksumType.FULL_OBJECT);
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("mp/crc64")).asByteArray()).isEqualTo(all);
    }
}
