/**
 * /verify-email?token=…: the hosted verification page (@iam/hosted-pages/browser
 * VerifyEmailPage), through `POST /api/v1/auth/email-verification/confirm` when the person
 * presses "Verify".
 */
import { VerifyEmailPage } from '@iam/hosted-pages/browser';
import { confirmEmailVerification } from './api';
import { mount } from './layout';
import { takeToken } from './token';

mount(<VerifyEmailPage token={takeToken()} confirm={confirmEmailVerification} />);
