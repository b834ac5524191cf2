package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.s3.GatewayCluster;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.auth.aws.scheme.AwsV4AuthScheme;
import software.amazon.awssdk.http.auth.spi.scheme.AuthScheme;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignRequest;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignedRequest;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignRequest;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.identity.spi.IdentityProvider;
import software.amazon.awssdk.identity.spi.IdentityProviders;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;

/**
 * The bodies the SDK sends over HTTPS, where it does not sign payloads: {@code UNSIGNED-PAYLOAD} and,
 * for uploads, {@code STREAMING-UNSIGNED-PAYLOAD-TRAILER} (aws-chunked, CRC32 trailer), the default of
 * every AWS SDK since 2025. Over plain HTTP the SDK signs payloads, so the client here signs each
 * request as if its scheme were https (the SDK's own signer decides the payload mode from the scheme)
 * and sends it over HTTP: the bytes on the wire are those of an HTTPS client.
 */
class UnsignedPayloadTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static S3Client s3;
    private static String bucket;

    /** The SDK's SigV4 signer, told the request is https. */
    static final class AsIfTls implements HttpSigner<AwsCredentialsIdentity> {
        private final HttpSigner<AwsCredentialsIdentity> delegate = AwsV4AuthScheme.create().signer();

        @Override
        public SignedRequest sign(SignRequest<? extends AwsCredentialsIdentity> request) {
            String scheme = request.request().protocol();
            SignedRequest signed = delegate.sign(request.copy(b -> b.request(request.request().toBuilder().protocol("https").build())));
            return signed.copy(b -> b.request(signed.request().toBuilder().protocol(scheme).build()));
        }

        @Override
        public CompletableFuture<AsyncSignedRequest> signAsync(AsyncSignRequest<? extends AwsCredentialsIdentity> request) {
            throw new UnsupportedOperationException("sync client only");
        }
    }

    @BeforeAll
    static void client() {
        AuthScheme<AwsCredentialsIdentity> sigv4 = new AuthScheme<>() {
            private final AwsV4AuthScheme base = AwsV4AuthScheme.create();

            @Override
            public String schemeId() {
                return AwsV4AuthScheme.SCHEME_ID;
            }

            @Override
            public IdentityProvider<AwsCredentialsIdentity> identityProvider(IdentityProviders providers) {
                return base.identityProvider(providers);
            }

            @Override
            public HttpSigner<AwsCredentialsIdentity> signer() {
                return new AsIfTls();
            }
        };
        s3 = SdkCluster.builder(S3.endpoint(), GatewayCluster.ACCESS_KEY, GatewayCluster.SECRET_KEY).putAuthScheme(sigv4).build();
        bucket = S3.bucket("unsigned");
    }

    @AfterAll
    static void close() {
        s3.close();
    }

    @Test
    void uploadsWithUnsignedTrailersReadBackByteExact() {
        for (int size : List.of(0, 1, 8191, 8192, 65537, SdkCluster.CHUNK, 3 * SdkCluster.CHUNK + 17)) {
            byte[] data = Digests.bytes(size, size);
            String key = "size/" + size;
            assertThat(s3.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(data)).checksumCRC32())
                    .isEqualTo(Digests.crc32(data));
            assertThat(s3.getObjectAsBytes(b -> b.bucket(bucket).key(key).checksumMode(ChecksumMode.ENABLED)).asByteArray())
                    .as("size %d", size).isEqualTo(data);
            assertThat(s3.headObject(b -> b.bucket(bucket).key(key)).eTag()).isEqualTo(Digests.etag(data));
        }
        byte[] data = Digests.bytes(7, 100_000);
        s3.putObject(b -> b.bucket(bucket).key("sha256").checksumAlgorithm(ChecksumAlgorithm.SHA256), RequestBody.fromBytes(data));
        assertThat(s3.headObject(b -> b.bucket(bucket).key("sha256").checksumMode(ChecksumMode.ENABLED)).checksumSHA256())
                .isEqualTo(Digests.sha256(data));
        // A body of unknown length: the SDK streams it aws-chunked as it reads.
        byte[] streamed = Digests.bytes(8, 2 * SdkCluster.CHUNK + 5);
        s3.putObject(b -> b.bucket(bucket).key("streamed"), RequestBody.fromContentProvider(
                () -> new java.io.ByteArrayInputStream(streamed), "application/octet-stream"));
        assertThat(s3.getObjectAsBytes(b -> b.bucket(bucket).key("streamed")).asByteArray()).isEqualTo(streamed);
    }

    @Test
    void multipartAndDeleteObjectsWithUnsignedPayloads() {
        List<byte[]> parts = List.of(Digests.bytes(100, SdkCluster.PART), Digests.bytes(101, 10));
        String id = s3.createMultipartUpload(b -> b.bucket(bucket).key("mp")).uploadId();
        String e1 = s3.uploadPart(b -> b.bucket(bucket).key("mp").uploadId(id).partNumber(1), RequestBody.fromBytes(parts.get(0))).eTag();
        String e2 = s3.uploadPart(b -> b.bucket(bucket).key("mp").uploadId(id).partNumber(2), RequestBody.fromBytes(parts.get(1))).eTag();
        s3.completeMultipartUpload(b -> b.bucket(bucket).key("mp").uploadId(id).multipartUpload(m -> m.parts(
                CompletedPart.builder().partNumber(1).eTag(e1).build(), CompletedPart.builder().partNumber(2).eTag(e2).build())));
        assertThat(s3.getObjectAsBytes(b -> b.bucket(bucket).key("mp")).asByteArray()).isEqualTo(Digests.concat(parts));
        assertThat(s3.deleteObjects(b -> b.bucket(bucket).delete(Delete.builder().objects(
                ObjectIdentifier.builder().key("mp").build(), ObjectIdentifier.builder().key("sha256").build()).build())).errors())
                .isEmpty();
        assertThat(s3.listObjectsV2(b -> b.bucket(bucket).prefix("mp")).contents()).isEmpty();
    }
}
