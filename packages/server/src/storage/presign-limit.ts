/** The longest a presigned S3 URL may last (SigV4): a week. Apart from s3-storage.ts, which loads the AWS SDK. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;
