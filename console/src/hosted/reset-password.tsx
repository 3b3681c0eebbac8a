/**
 * /reset-password?token=…: the hosted reset page (@iam/hosted-pages/browser ResetPasswordPage),
 * posting to `POST /api/v1/auth/password-reset/confirm`, or without a token the request
 * (`POST /api/v1/auth/password-reset/request`, answered alike whether or not an account has it).
 */
import { ResetPasswordPage } from '@iam/hosted-pages/browser';
import { passwordPolicy } from '../api/limits.generated';
import { confirmPasswordReset, requestPasswordReset } from './api';
import { mount } from './layout';
import { takeToken } from './token';

mount(<ResetPasswordPage token={takeToken()} api={{ request: requestPasswordReset, confirm: confirmPasswordReset }} policy={passwordPolicy} />);
