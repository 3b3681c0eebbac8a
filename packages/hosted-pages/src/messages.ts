/**
 * Every string the hosted pages show, in one catalogue: the provider's pages (identity renders
 * them) and the reset and verification pages (the console's build). One object per page; a
 * translation is another object of the same type (`Messages`), a theme changes styles.css only.
 * Functions take what the sentence names, never markup: the pages escape every value.
 */
export const en = {
  brand: 'IAM',
  titleSuffix: ' · IAM',
  signIn: {
    title: 'Sign in',
    continueTo: 'to continue to',
    email: 'Email',
    password: 'Password',
    submit: 'Sign in',
    passkey: 'Sign in with a passkey',
    passkeyFailed: 'The passkey was not used. Try again or use another way.',
    forgotPassword: 'Forgot your password?',
    otherWays: 'Other ways to sign in',
    withProvider: 'Sign in with',
    missingFields: 'Enter your email and password.',
    passkeyNotVerified: 'The passkey could not be verified. Try again or use your password.',
  },
  factor: {
    title: 'Second factor',
    heading: 'Confirm it is you',
    code: 'Code from your authenticator app',
    submit: 'Continue',
    passkey: 'Use a passkey',
    recoverySummary: 'Use a recovery code',
    recoveryCode: 'Recovery code',
    recoverySubmit: 'Use the recovery code',
    missingCode: 'Enter a code, or use another way.',
    missingEnrolCode: 'Enter the 6-digit code your app shows.',
    refused: 'That did not work. Check it and try again.',
  },
  enrol: {
    title: 'Set up a second factor',
    intro: 'This account needs a second factor. Scan the code with an authenticator app, or enter the key by hand, then type the code the app shows.',
    qrLabel: 'QR code of the authenticator app key',
    key: 'Key:',
    submit: 'Turn on and continue',
    passkeyIntro: 'Or use a passkey: this device\'s screen lock or a security key.',
    passkey: 'Use a passkey instead',
  },
  consent: {
    title: 'Allow access',
    asks: 'asks to:',
    apiHeading: 'Act for you at the API',
    apiIntro: 'With these permissions, as you hold them:',
    allow: 'Allow',
    deny: 'Deny',
    scopes: {
      openid: 'Know who you are (your account id)',
      profile: 'Your first and last name',
      email: 'Your email address and whether it is verified',
      offline_access: 'Stay signed in when you are away (a refresh token)',
    } as Record<string, string>,
  },
  logout: {
    title: 'Sign out',
    /** "Do you want to sign out [of <client> and] of this identity provider?" */
    ask: 'Do you want to sign out',
    ofClient: 'of',
    and: 'and',
    ofProvider: 'of this identity provider?',
    confirm: 'Sign out',
    stay: 'Stay signed in',
    doneTitle: 'Signed out',
    done: 'You are signed out.',
  },
  device: {
    inputTitle: 'Connect a device',
    inputHelp: 'Enter the code your device shows.',
    confirmTitle: 'Confirm the device',
    confirmAsks: 'asks to sign in. Continue only if your device shows this code:',
    continue: 'Continue',
    cancel: 'Cancel',
    code: 'Code',
    invalidCode: 'The code is not valid or has expired. Check it and try again.',
    doneTitle: 'Device connected',
    done: 'The device is signed in. You can close this page.',
  },
  /** A password the account must change before the sign-in goes on (imported with passwordChangeRequired). */
  changePassword: {
    title: 'Choose a new password',
    intro: 'Your account needs a new password before you continue.',
    newPassword: 'New password',
    submit: 'Set the new password and continue',
    missing: 'Enter a new password.',
  },
  /** Signing in through another identity provider. */
  federation: {
    proveTitle: 'Connect your account',
    proveIntro: (provider: string) => `An account with your ${provider} email address exists here. Sign in to it once to connect ${provider}.`,
    proveSubmit: 'Sign in and connect',
    notConnectedTitle: 'Not connected',
    notThatAccount: (provider: string) => `That is not the account with your ${provider} email address; nothing was connected.`,
    notCompleted: 'The sign-in could not be completed (the account may be locked). Try again later or sign in another way.',
    backToSignIn: 'Back to the sign-in page',
    linksOnly: 'This address is for links only.',
    /** A refused upstream sign-in, by reason: plain words, never what the upstream said. */
    refusals: {
      'local-email-unverified': (p: string) => ({
        title: 'Verify your email first',
        text: `An account with this email address exists here, but its address was never verified, so ${p} cannot be connected to it. Reset that account's password from the sign-in page (the mail proves the address), then sign in and connect ${p} from your account page.`,
      }),
      'linking-disabled': (p: string) => ({ title: 'Sign in with your password', text: `An account with this email address exists here; ${p} cannot be connected to it. Sign in with your password instead.` }),
      'sign-up-disabled': (p: string) => ({ title: 'No account', text: `No account here is connected to your ${p} account, and new accounts cannot be made with it. Ask your administrator.` }),
      'no-email': (p: string) => ({ title: 'No verified email', text: `${p} did not share a verified email address. Verify one there, then try again.` }),
      'already-in-use': (p: string) => ({ title: 'Already in use', text: `That ${p} account or its email address is already in use here. Sign in with your password instead.` }),
      unavailable: (p: string) => ({ title: 'Try again shortly', text: `${p} cannot be reached right now. Try again in a moment, or sign in another way.` }),
      failed: (p: string) => ({ title: 'Sign-in failed', text: `The sign-in with ${p} could not be completed. Start again from the sign-in page.` }),
    },
  },
  /** The provider's error pages. */
  signInErrors: {
    title: 'Sign-in failed',
    cannotContinue: 'This sign-in cannot continue. Start again from the application.',
    expired: 'This sign-in has expired or was already used. Start again from the application.',
    tookTooLong: 'The sign-in took too long. Sign in again.',
    unavailableTitle: 'Try again in a moment',
    unavailable: 'Signing in is unavailable right now. Wait a moment, then try again.',
    notFoundTitle: 'Not found',
    notFound: 'There is nothing here.',
  },
  resetPassword: {
    title: 'Choose a new password',
    newPassword: 'New password',
    show: 'Show the password',
    policyTitle: 'Your password needs:',
    atLeast: (n: number) => `At least ${n} characters`,
    submit: 'Set the new password',
    saving: 'Saving…',
    doneTitle: 'Your password is changed',
    done: 'Your new password is set, and every device that was signed in has been signed out.',
    signInAgain: 'Sign in',
    signInAgainAfter: ' with your new password.',
    requestTitle: 'Forgot your password?',
    requestIntro: 'Enter the email address of your account. If it has one, we send it a link to choose a new password.',
    email: 'Email',
    requestSubmit: 'Send the link',
    sending: 'Sending…',
    requestedTitle: 'Check your email',
    requested: 'If an account has this address, a link to choose a new password is on its way. It works once, for a limited time.',
    backToSignIn: 'Back to sign in',
  },
  verifyEmail: {
    title: 'Confirm your email address',
    intro: 'Press the button to confirm that this email address is yours.',
    submit: 'Verify',
    busy: 'Verifying…',
    doneTitle: 'Your email address is confirmed',
    done: 'Thank you: your email address is confirmed. You can close this page.',
  },
  links: {
    notValidTitle: 'This link cannot be used',
    notValid: 'This link is not valid any more: it was already used, it has expired, or it is incomplete. Ask for a new email and use the link in it.',
    noToken: (what: string) => `This page opens from the link in ${what}. The link is missing its token: open it from the email again, or ask for a new email.`,
    verificationEmail: 'a verification email',
  },
  problems: {
    tooMany: 'Too many attempts from here. Wait a minute, then try again.',
    generic: 'Something went wrong. Try again.',
  },
};

export type Messages = typeof en;

/** The catalogue the pages use (English until a translation is chosen per request). */
export const messages: Messages = en;
