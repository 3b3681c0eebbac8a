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
      organization: 'Act in an organization you are a member of, with your roles there',
      organizations: 'Know which organizations you are a member of',
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
  },
  device: {
    inputTitle: 'Connect a device',
    inputHelp: 'Enter the code your device shows.',
    confirmTitle: 'Confirm the device',
    confirmAsks: 'asks to sign in. Continue only if your device shows this code:',
    continue: 'Continue',
    cancel: 'Cancel',
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
