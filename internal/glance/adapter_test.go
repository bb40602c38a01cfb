package glance_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ingot-dev/ingot/internal/glance"
	"github.com/ingot-dev/ingot/internal/glancetest"
	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/ingot-dev/ingot/internal/servicecatalog"
)

func mustIs(t *testing.T, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v, want %v", err, kind)
	}
}

// TestAgainstGlance runs the adapter against a real glance-api found
// through Keystone's catalog: visibility per project, the service user's
// view, min_disk and min_ram, traits, an image not active, refused tokens.
func TestAgainstGlance(t *testing.T) {
	ctx := context.Background()
	ks := keystonetest.Start(t)
	g := glancetest.Start(t, ks)
	pc, err := servicecatalog.Authenticate(ctx, servicecatalog.Credentials{
		AuthURL: ks.URL, Username: "ingot", Password: keystonetest.Password, ProjectName: "service"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := servicecatalog.Image(pc, servicecatalog.Endpoint{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	service := glance.New(sc, 0)
	as := func(user string) *glance.Client {
		return glance.New(servicecatalog.WithToken(sc, ks.Token(t, user)), 0)
	}
	private := g.UploadImage(t, "member-a", glancetest.ImageOptions{Name: "private-a", MinDisk: 3, MinRAM: 512,
		Properties: map[string]string{"trait:CUSTOM_GOLD": "required", "trait:CUSTOM_SLOW": "forbidden", "hw_firmware_type": "uefi"}})
	queued := g.CreateQueued(t, "member-a", "queued-a")

	t.Run("owner-reads-its-private-image", func(t *testing.T) {
		img, err := as("member-a").BootableImage(ctx, private)
		if err != nil {
			t.Fatal(err)
		}
		if img.Status != glance.Active || img.Visibility != "private" || img.Owner != ks.Users["member-a"].ProjectID ||
			img.DiskFormat != "raw" || img.MinDiskGB != 3 || img.MinRAMMB != 512 || img.Properties["hw_firmware_type"] != "uefi" || img.Properties["direct_url"] != "" {
			t.Fatalf("image: %+v", img)
		}
		req, forb := img.Traits()
		if !slices.Equal(req, []string{"CUSTOM_GOLD"}) || !slices.Equal(forb, []string{"CUSTOM_SLOW"}) {
			t.Fatalf("traits %v %v", req, forb)
		}
	})
	t.Run("another-project-does-not-see-it", func(t *testing.T) {
		_, err := as("member-b").GetImage(ctx, private)
		mustIs(t, err, glance.ErrImageNotFound)
		list, err := as("member-b").ListImages(ctx, glance.ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(list, func(i glance.Image) bool { return i.ID == private }) {
			t.Fatal("member-b lists project a's private image")
		}
		own, err := as("member-a").ListImages(ctx, glance.ListFilter{Status: glance.Active})
		if err != nil || len(own) != 1 || own[0].ID != private {
			t.Fatalf("member-a's active images: %v %+v", err, own)
		}
	})
	t.Run("service-user-sees-it", func(t *testing.T) {
		img, err := service.GetImage(ctx, private)
		if err != nil || img.ID != private || img.MinDiskGB != 3 {
			t.Fatalf("service: %v %+v", err, img)
		}
	})
	t.Run("flavor-below-minimums", func(t *testing.T) {
		img, err := service.GetImage(ctx, private)
		if err != nil {
			t.Fatal(err)
		}
		mustIs(t, img.CheckFlavor(2, 1024), glance.ErrFlavorDiskTooSmall)
		mustIs(t, img.CheckFlavor(3, 256), glance.ErrFlavorMemoryTooSmall)
		if err := img.CheckFlavor(3, 512); err != nil {
			t.Fatal(err)
		}
		if err := img.CheckFlavor(0, 512); err != nil {
			t.Fatalf("volume-backed (disk 0): %v", err)
		}
	})
	t.Run("image-not-active", func(t *testing.T) {
		img, err := as("member-a").BootableImage(ctx, queued)
		mustIs(t, err, glance.ErrImageNotActive)
		if img.Status != "queued" {
			t.Fatalf("status %s", img.Status)
		}
	})
	t.Run("unknown-image", func(t *testing.T) {
		_, err := service.GetImage(ctx, "00000000-0000-4000-8000-000000000000")
		mustIs(t, err, glance.ErrImageNotFound)
	})
	t.Run("token-refused", func(t *testing.T) {
		tok := ks.Token(t, "member-b")
		ks.Revoke(t, tok)
		_, err := glance.New(servicecatalog.WithToken(sc, tok), 0).GetImage(ctx, private)
		mustIs(t, err, glance.ErrNotAuthorized)
	})
	rss, procs := g.Proc.RSS()
	t.Logf("glance-api: RSS %d MiB over %d processes (db_sync %s, start %s)", rss>>20, procs,
		g.SyncTime.Round(1e6), g.Proc.StartTime.Round(1e6))
}
