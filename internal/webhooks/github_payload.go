package webhooks

// The parts of GitHub's payloads Herald renders.
type (
	ghPayload struct {
		Action           string          `json:"action"`
		Zen              string          `json:"zen"`
		HookID           int64           `json:"hook_id"`
		Repository       *ghRepository   `json:"repository"`
		Sender           *ghUser         `json:"sender"`
		Release          *ghRelease      `json:"release"`
		WorkflowRun      *ghWorkflowRun  `json:"workflow_run"`
		Issue            *ghIssue        `json:"issue"`
		PullRequest      *ghPullRequest  `json:"pull_request"`
		SecurityAdvisory *ghAdvisory     `json:"security_advisory"`
		Alert            *ghAlert        `json:"alert"`
		Workflow         *ghWorkflowName `json:"workflow"`
	}
	ghRepository struct {
		FullName string `json:"full_name"`
		HTMLURL  string `json:"html_url"`
	}
	ghUser struct {
		Login string `json:"login"`
	}
	ghRelease struct {
		TagName     string `json:"tag_name"`
		Name        string `json:"name"`
		Body        string `json:"body"`
		HTMLURL     string `json:"html_url"`
		Prerelease  bool   `json:"prerelease"`
		PublishedAt string `json:"published_at"`
		Author      ghUser `json:"author"`
	}
	ghWorkflowRun struct {
		Name        string `json:"name"`
		DisplayName string `json:"display_title"`
		RunNumber   int64  `json:"run_number"`
		RunAttempt  int64  `json:"run_attempt"`
		Event       string `json:"event"`
		Status      string `json:"status"`
		Conclusion  string `json:"conclusion"`
		HeadBranch  string `json:"head_branch"`
		HeadSHA     string `json:"head_sha"`
		HTMLURL     string `json:"html_url"`
		UpdatedAt   string `json:"updated_at"`
		Actor       ghUser `json:"actor"`
		HeadCommit  *struct {
			Message string `json:"message"`
		} `json:"head_commit"`
	}
	ghWorkflowName struct {
		Name string `json:"name"`
	}
	ghIssue struct {
		Number      int64  `json:"number"`
		Title       string `json:"title"`
		Body        string `json:"body"`
		HTMLURL     string `json:"html_url"`
		StateReason string `json:"state_reason"`
		UpdatedAt   string `json:"updated_at"`
		User        ghUser `json:"user"`
	}
	ghPullRequest struct {
		Number    int64  `json:"number"`
		Title     string `json:"title"`
		Body      string `json:"body"`
		HTMLURL   string `json:"html_url"`
		Merged    bool   `json:"merged"`
		Draft     bool   `json:"draft"`
		UpdatedAt string `json:"updated_at"`
		User      ghUser `json:"user"`
		MergedBy  ghUser `json:"merged_by"`
		Head      ghRef  `json:"head"`
		Base      ghRef  `json:"base"`
	}
	ghRef struct {
		Ref string `json:"ref"`
	}
	ghAdvisory struct {
		GHSAID          string            `json:"ghsa_id"`
		CVEID           string            `json:"cve_id"`
		Identifiers     []ghIdentifier    `json:"identifiers"`
		Summary         string            `json:"summary"`
		Description     string            `json:"description"`
		Severity        string            `json:"severity"`
		HTMLURL         string            `json:"html_url"`
		PublishedAt     string            `json:"published_at"`
		Vulnerabilities []ghVulnerability `json:"vulnerabilities"`
	}
	// ghIdentifier is one of an advisory's ids: type GHSA or CVE.
	ghIdentifier struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	}
	ghVulnerability struct {
		Package                ghPackage  `json:"package"`
		Severity               string     `json:"severity"`
		VulnerableVersionRange string     `json:"vulnerable_version_range"`
		FirstPatchedVersion    *ghPatched `json:"first_patched_version"`
	}
	ghPackage struct {
		Ecosystem string `json:"ecosystem"`
		Name      string `json:"name"`
	}
	ghPatched struct {
		Identifier string `json:"identifier"`
	}
	// ghAlert holds the alert of both dependabot_alert and the older
	// repository_vulnerability_alert event: their fields do not overlap.
	ghAlert struct {
		// dependabot_alert
		Number     int64 `json:"number"`
		Dependency *struct {
			Package      ghPackage `json:"package"`
			ManifestPath string    `json:"manifest_path"`
		} `json:"dependency"`
		SecurityAdvisory      *ghAdvisory      `json:"security_advisory"`
		SecurityVulnerability *ghVulnerability `json:"security_vulnerability"`
		HTMLURL               string           `json:"html_url"`
		CreatedAt             string           `json:"created_at"`

		// repository_vulnerability_alert
		AffectedPackageName string `json:"affected_package_name"`
		AffectedRange       string `json:"affected_range"`
		FixedIn             string `json:"fixed_in"`
		ExternalReference   string `json:"external_reference"`
		ExternalIdentifier  string `json:"external_identifier"`
		GHSAID              string `json:"ghsa_id"`
		Severity            string `json:"severity"`
	}
)
