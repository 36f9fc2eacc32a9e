/** The help of the start commands' --owner and --team (run, campaign, sweep, schedule create). */
export const OWNER_HELP = "who the run is for (default: the spec's owner, else the OS user)";
export const TEAM_HELP = "the team it counts against (default: the spec's team, else 'default')";
