/**
 * The S3 gateway's namespace records (buckets, objects, multipart uploads and their parts, and the
 * pending records that name every needle an upload writes before a key refers to it): the JSON of the
 * directory's {@code /v1/s3/...} routes (docs/directory-api.md "S3 namespace") and the values of the
 * directory's {@code s3-*} column families (docs/formats.md "S3 namespace"). Written by the directory,
 * read by the gateway; unknown fields are ignored on read, so a field may be added.
 */
package io.hayloft.format.s3;
